"""read_file, write_file, edit_file, glob, read_many_files, multi_edit and list_dir on real files."""

from __future__ import annotations

import os
import stat

import pytest

from .files_helpers import call, make_ctx, write
from nbagent.errors import ToolError
from nbagent.tools.files import (
    EDIT_FILE, GLOB, LIST_DIR, MULTI_EDIT, READ_FILE, READ_MANY_FILES, WRITE_FILE,
)

NUMBERED = "".join(f"line {i}\n" for i in range(1, 51))


# --- read_file ---------------------------------------------------------------------

async def test_read_file_numbers_lines_and_shows_a_short_file_whole(ctx, root):
    write(root, {"a.txt": "alpha\nbeta\n"})
    assert await call(ctx, READ_FILE, path="a.txt") == "     1\talpha\n     2\tbeta"


async def test_read_file_window_says_how_to_read_on(ctx, root):
    write(root, {"n.txt": NUMBERED})
    out = await call(ctx, READ_FILE, path="n.txt", offset=10, limit=3)
    assert out.splitlines() == [
        "    10\tline 10", "    11\tline 11", "    12\tline 12", "[lines 10-12 of 50 shown; read on with offset=13]",
    ]
    end = await call(ctx, READ_FILE, path="n.txt", offset=49)
    assert end.endswith("[lines 49-50 of 50: the end of the file]")


async def test_read_file_stays_under_the_output_limit_and_says_where_it_stopped(root):
    ctx = make_ctx(root, output_limit=2000)
    write(root, {"big.txt": "".join(f"{'x' * 80} {i}\n" for i in range(1, 200))})
    out = await call(ctx, READ_FILE, path="big.txt")
    assert len(out) <= 2000
    last_line = int(out.splitlines()[-2].split("\t")[0])
    assert out.endswith(f"read on with offset={last_line + 1}]")


async def test_read_file_cuts_a_very_long_line(ctx, root):
    write(root, {"min.js": "x" * 5000 + "\nshort\n"})
    out = await call(ctx, READ_FILE, path="min.js")
    first, second = out.splitlines()
    assert first.startswith("     1\t" + "x" * 2000) and "line cut: 3,000 more bytes" in first
    assert second == "     2\tshort"


async def test_read_file_refuses_binary_files_clearly(ctx, root):
    write(root, {"img.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(100)})
    with pytest.raises(ToolError, match=r"img.png is a binary file \(.*image/png\)"):
        await call(ctx, READ_FILE, path="img.png")


@pytest.mark.process
async def test_read_file_edge_cases(ctx, root):
    write(root, {"empty.txt": "", "two.txt": "a\nb", "latin.txt": b"caf\xe9\n", "src/x.py": "x"})
    assert await call(ctx, READ_FILE, path="empty.txt") == "(empty.txt is empty)"
    assert await call(ctx, READ_FILE, path="two.txt") == "     1\ta\n     2\tb"
    assert "shown as \ufffd" in await call(ctx, READ_FILE, path="latin.txt")
    with pytest.raises(ToolError, match="past the end of two.txt: it has 2 lines"):
        await call(ctx, READ_FILE, path="two.txt", offset=5)
    with pytest.raises(ToolError, match="is a directory: use list_dir"):
        await call(ctx, READ_FILE, path="src")
    with pytest.raises(ToolError, match="x.pyy does not exist.*similar files: src/x.py"):
        await call(ctx, READ_FILE, path="src/x.pyy")
    with pytest.raises(ToolError, match="offset"):
        await call(ctx, READ_FILE, path="two.txt", offset=0)


async def test_read_file_may_read_nbagent_outputs(ctx, root):
    saved = ctx.workspace.state_dir / "outputs" / "bash-1.txt"
    saved.parent.mkdir()
    saved.write_text(NUMBERED)
    out = await call(ctx, READ_FILE, path=".nbagent/outputs/bash-1.txt", offset=50)
    assert out.startswith("    50\tline 50")


# --- write_file ----------------------------------------------------------------------

async def test_write_file_creates_parents_and_returns_a_diff(ctx, root):
    out = await call(ctx, WRITE_FILE, path="new/dir/a.py", content="print(1)\n")
    assert (root / "new/dir/a.py").read_text() == "print(1)\n"
    assert out.splitlines() == [
        "Created new/dir/a.py (1 line)", "--- /dev/null", "+++ b/new/dir/a.py", "@@ -0,0 +1 @@", "+print(1)",
    ]
    assert not [p for p in (root / "new/dir").iterdir() if p.name.endswith(".nbagent-tmp")]


async def test_write_file_replaces_and_keeps_the_mode(ctx, root):
    write(root, {"run.sh": "echo old\n"})
    os.chmod(root / "run.sh", 0o754)
    out = await call(ctx, WRITE_FILE, path="run.sh", content="echo new\n")
    assert "-echo old\n+echo new" in out and out.startswith("Wrote run.sh")
    assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o754
    assert await call(ctx, WRITE_FILE, path="run.sh", content="echo new\n") == (
        "No change: run.sh already has this content"
    )


async def test_a_new_file_gets_the_umask_mode(ctx, root):
    old = os.umask(0o027)
    try:
        await call(ctx, WRITE_FILE, path="f.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / "f.txt").stat().st_mode) == 0o640


async def test_write_file_refuses_nbagent_outside_and_directories(ctx, root):
    (root / "d").mkdir()
    with pytest.raises(ToolError, match="never write"):
        await call(ctx, WRITE_FILE, path=".nbagent/x", content="x")
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(ctx, WRITE_FILE, path="../escape.txt", content="x")
    with pytest.raises(ToolError, match="is a directory"):
        await call(ctx, WRITE_FILE, path="d", content="x")
    assert not (root.parent / "escape.txt").exists()


async def test_write_through_an_inside_symlink_writes_its_target(ctx, root):
    write(root, {"real.txt": "old\n"})
    (root / "alias.txt").symlink_to("real.txt")
    await call(ctx, WRITE_FILE, path="alias.txt", content="new\n")
    assert (root / "alias.txt").is_symlink() and (root / "real.txt").read_text() == "new\n"


def test_write_file_preview_is_the_diff_and_writes_nothing(ctx, root):
    write(root, {"a.txt": "one\n"})
    diff = WRITE_FILE.preview(ctx, **WRITE_FILE.validate({"path": "a.txt", "content": "two\n"}))
    assert diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"
    assert (root / "a.txt").read_text() == "one\n"
    assert WRITE_FILE.preview(ctx, path="b.txt", content="x").startswith("--- /dev/null")
    assert not (root / "b.txt").exists()


# --- edit_file ------------------------------------------------------------------------

async def test_edit_file_replaces_a_unique_match(ctx, root):
    write(root, {"a.py": "def f():\n    return 1\n"})
    out = await call(ctx, EDIT_FILE, path="a.py", old_string="return 1", new_string="return 2")
    assert (root / "a.py").read_text() == "def f():\n    return 2\n"
    assert out.startswith("Edited a.py (1 replacement)\n--- a/a.py\n+++ b/a.py\n")
    assert "-    return 1\n+    return 2" in out


@pytest.mark.process
async def test_edit_file_errors_name_what_to_do(ctx, root):
    write(root, {"a.py": "x = 1\ny = 2\nx = 1\n    indented = True\n"})
    before = (root / "a.py").read_bytes()
    with pytest.raises(ToolError, match=r"occurs 2 times \(at lines 1, 3\).*replace_all=true"):
        await call(ctx, EDIT_FILE, path="a.py", old_string="x = 1", new_string="x = 3")
    with pytest.raises(ToolError, match="not found"):
        await call(ctx, EDIT_FILE, path="a.py", old_string="z = 9", new_string="z = 0")
    with pytest.raises(ToolError, match="differs only in whitespace starts at line 4"):
        await call(ctx, EDIT_FILE, path="a.py", old_string="indented  =  True", new_string="no")
    with pytest.raises(ToolError, match="the same"):
        await call(ctx, EDIT_FILE, path="a.py", old_string="y = 2", new_string="y = 2")
    with pytest.raises(ToolError, match="empty"):
        await call(ctx, EDIT_FILE, path="a.py", old_string="", new_string="y")
    with pytest.raises(ToolError, match="does not exist.*write_file"):
        await call(ctx, EDIT_FILE, path="missing.py", old_string="a", new_string="b")
    assert (root / "a.py").read_bytes() == before


async def test_edit_file_replace_all(ctx, root):
    write(root, {"a.py": "x = 1\nx = 1\n"})
    out = await call(ctx, EDIT_FILE, path="a.py", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert (root / "a.py").read_text() == "x = 2\nx = 2\n" and "(2 replacements)" in out


async def test_edit_file_keeps_windows_line_endings_and_odd_bytes(ctx, root):
    write(root, {"w.txt": b"caf\xe9\r\nfirst\r\nsecond\r\n"})
    await call(ctx, EDIT_FILE, path="w.txt", old_string="first\nsecond", new_string="one\ntwo")
    assert (root / "w.txt").read_bytes() == b"caf\xe9\r\none\r\ntwo\r\n"


async def test_edit_file_keeps_mode_and_preview_writes_nothing(ctx, root):
    write(root, {"s.sh": "echo a\n"})
    os.chmod(root / "s.sh", 0o700)
    args = EDIT_FILE.validate({"path": "s.sh", "old_string": "a", "new_string": "b"})
    assert EDIT_FILE.preview(ctx, **args) == "--- a/s.sh\n+++ b/s.sh\n@@ -1 +1 @@\n-echo a\n+echo b\n"
    assert (root / "s.sh").read_text() == "echo a\n"
    await call(ctx, EDIT_FILE, **args)
    assert stat.S_IMODE((root / "s.sh").stat().st_mode) == 0o700


async def test_edit_file_diff_marks_a_missing_final_newline(ctx, root):
    write(root, {"a.txt": "a\nb"})
    out = await call(ctx, EDIT_FILE, path="a.txt", old_string="b", new_string="c")
    assert out.endswith("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")


# --- glob ---------------------------------------------------------------------------------

@pytest.fixture
def project(root):
    write(root, {
        ".gitignore": "build/\n", "README.md": "", "notes.txt": "", "src/a.py": "", "src/b.ts": "",
        "src/pkg/c.py": "", "src/pkg/d.tsx": "", "tests/test_a.py": "", "build/gen.py": "", ".github/ci.yml": "",
    })
    return root


@pytest.mark.process
async def test_glob_patterns(ctx, project):
    assert (await call(ctx, GLOB, pattern="**/*.py")).splitlines() == ["src/a.py", "src/pkg/c.py", "tests/test_a.py"]
    assert (await call(ctx, GLOB, pattern="*.{md,txt}")).splitlines() == ["README.md", "notes.txt"]
    assert (await call(ctx, GLOB, pattern="src/*")).splitlines() == ["src/a.py", "src/b.ts"]
    assert (await call(ctx, GLOB, pattern="**/*.ts?")).splitlines() == ["src/pkg/d.tsx"]
    assert (await call(ctx, GLOB, pattern="src/**")).splitlines() == [
        "src/a.py", "src/b.ts", "src/pkg/c.py", "src/pkg/d.tsx",
    ]
    assert (await call(ctx, GLOB, pattern="**/*.yml")).splitlines() == [".github/ci.yml"]
    assert (await call(ctx, GLOB, pattern="test_[ab].py", path="tests")).splitlines() == ["tests/test_a.py"]
    assert (await call(ctx, GLOB, pattern="*.py", path="src/pkg")) == "src/pkg/c.py"


@pytest.mark.process
async def test_glob_leaves_out_ignored_files_and_hints_at_recursion(ctx, project):
    out = await call(ctx, GLOB, pattern="*.py")
    assert "No files match *.py" in out and "try **/*.py" in out
    assert "build/gen.py" not in await call(ctx, GLOB, pattern="**/*.py")


@pytest.mark.process
async def test_glob_caps_its_results(ctx, root):
    write(root, {f"f{i:04}.txt": "" for i in range(510)})
    out = await call(ctx, GLOB, pattern="*.txt")
    assert out.endswith("[500 of 510 matches shown; narrow the pattern or the path]")


async def test_glob_path_must_be_a_directory_inside(ctx, project):
    with pytest.raises(ToolError, match="is a file"):
        await call(ctx, GLOB, pattern="*", path="README.md")
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(ctx, GLOB, pattern="*", path="..")


# --- read_many_files -------------------------------------------------------------------------

@pytest.mark.process
async def test_read_many_files_gives_each_its_block_and_reports_failures_in_place(ctx, root):
    write(root, {"a.txt": "A\n", "b.txt": NUMBERED, "bin.dat": b"\0\1"})
    out = await call(ctx, READ_MANY_FILES, paths=["a.txt", "missing.txt", "b.txt", "../x", "bin.dat"], limit=2)
    blocks = out.split("\n\n")
    assert blocks[0] == "==> a.txt <==\n     1\tA"
    assert blocks[1].startswith("==> missing.txt <==\nerror: missing.txt does not exist")
    assert blocks[2].endswith("[lines 1-2 of 50 shown; read on with offset=3]")
    assert "outside the workspace" in blocks[3] and "binary file" in blocks[4]


async def test_read_many_files_takes_at_most_twenty(ctx, root):
    with pytest.raises(ToolError, match="at most 20"):
        await call(ctx, READ_MANY_FILES, paths=[f"f{i}" for i in range(21)])


async def test_read_many_files_shares_the_output_limit(root):
    ctx = make_ctx(root, output_limit=4000)
    write(root, {f"f{i}.txt": NUMBERED * 4 for i in range(4)})
    out = await call(ctx, READ_MANY_FILES, paths=[f"f{i}.txt" for i in range(4)])
    assert len(out) <= 4000 and out.count("read on with offset=") == 4


# --- multi_edit -----------------------------------------------------------------------------

async def test_multi_edit_applies_edits_in_order(ctx, root):
    write(root, {"a.py": "a = 1\nb = 2\n"})
    out = await call(ctx, MULTI_EDIT, path="a.py", edits=[
        {"old_string": "a = 1", "new_string": "a = 10"},
        {"old_string": "a = 10\nb", "new_string": "a = 10\nc"},  # sees the first edit's result
        {"old_string": " = ", "new_string": ": int = ", "replace_all": True},
    ])
    assert (root / "a.py").read_text() == "a: int = 10\nc: int = 2\n"
    assert out.startswith("Edited a.py (4 replacements)")


async def test_multi_edit_writes_nothing_when_one_edit_fails(ctx, root):
    write(root, {"a.py": "a = 1\nb = 2\n"})
    before = (root / "a.py").read_bytes()
    with pytest.raises(ToolError, match="edit 2 of 2: old_string was not found"):
        await call(ctx, MULTI_EDIT, path="a.py", edits=[
            {"old_string": "a = 1", "new_string": "a = 5"}, {"old_string": "nope", "new_string": "x"},
        ])
    assert (root / "a.py").read_bytes() == before
    with pytest.raises(ToolError, match="edits"):
        await call(ctx, MULTI_EDIT, path="a.py", edits=[])


def test_multi_edit_preview(ctx, root):
    write(root, {"a.py": "a = 1\n"})
    args = MULTI_EDIT.validate({"path": "a.py", "edits": [{"old_string": "1", "new_string": "2"}]})
    assert MULTI_EDIT.preview(ctx, **args).endswith("-a = 1\n+a = 2\n")
    assert (root / "a.py").read_text() == "a = 1\n"


# --- list_dir -----------------------------------------------------------------------------------

@pytest.mark.process
async def test_list_dir_tree_with_counts_of_what_was_left_out(ctx, project):
    (project / "empty").mkdir()
    out = await call(ctx, LIST_DIR)
    assert out.splitlines() == [
        "./",
        "  .github/",
        "    ci.yml",
        "  src/",
        "    pkg/ (2 files below, not shown)",
        "    a.py",
        "    b.ts",
        "  tests/",
        "    test_a.py",
        "  .gitignore",
        "  notes.txt",
        "  README.md",
        "[left out: 2 ignored, empty or linked (build/, empty/)]",
    ]


async def test_list_dir_depth_and_subdirectory(ctx, project):
    assert (await call(ctx, LIST_DIR, path="src", depth=1)).splitlines() == [
        "src/", "  pkg/ (2 files below, not shown)", "  a.py", "  b.ts",
    ]
    assert (await call(ctx, LIST_DIR, path="src", depth=3)).splitlines()[1:3] == ["  pkg/", "    c.py"]


async def test_list_dir_of_an_ignored_directory_says_why_it_is_empty(ctx, project):
    out = await call(ctx, LIST_DIR, path="build")
    assert "ignored by .gitignore" in out and "bash `ls build`" in out


@pytest.mark.process
async def test_list_dir_caps_long_listings(ctx, root):
    write(root, {f"d{i:03}/f{j}.txt": "" for i in range(150) for j in range(3)})
    out = await call(ctx, LIST_DIR)
    lines = out.splitlines()
    assert len(lines) <= 403
    assert "more entries not shown" in lines[-1]


async def test_list_dir_refuses_files_and_outside(ctx, project):
    with pytest.raises(ToolError, match="is a file: use read_file"):
        await call(ctx, LIST_DIR, path="README.md")
    with pytest.raises(ToolError, match="outside"):
        await call(ctx, LIST_DIR, path="/")


async def test_a_fifo_is_refused_instead_of_blocking(ctx, root):
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await call(ctx, READ_FILE, path="pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await call(ctx, EDIT_FILE, path="pipe", old_string="a", new_string="b")
