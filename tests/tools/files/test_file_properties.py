"""Property tests: no path reaches outside the root, and multi_edit is all or nothing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .files_helpers import call, make_ctx
from nbagent.errors import ToolError
from nbagent.tools.files import EDIT_FILE, GLOB, LIST_DIR, MULTI_EDIT, READ_FILE, WRITE_FILE
from nbagent.tools.search import GREP_TOOL

SECRET = "SECRET-OUTSIDE"
FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@pytest.fixture
def jail(tmp_path: Path):
    """A workspace with links pointing in and out, next to a directory it must never touch."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "f.txt").write_text("inside\n")
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (root / "out").symlink_to("../outside")
    (root / "a" / "up").symlink_to("../..")
    (root / "in").symlink_to("a")
    (root / "abs_out").symlink_to(outside / "secret.txt")
    (root / "state").symlink_to(".nbagent")
    ctx = make_ctx(root)
    (ctx.workspace.state_dir / "db").write_text("state\n")
    return ctx


def snapshot(tmp_path: Path) -> dict[str, str]:
    """Every file outside the workspace, and everything under .nbagent/, by content hash."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        rel = Path(dirpath).relative_to(tmp_path)
        if rel.parts[:1] == ("ws",) and rel.parts[1:2] != (".nbagent",):
            continue
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            p = Path(dirpath) / name
            found[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else os.readlink(p)
    return found


SEGMENT = st.sampled_from(
    ["..", ".", "a", "b", "f.txt", "out", "up", "in", "abs_out", "state", ".nbagent", "secret.txt", "new", "outside", "ws", "db"]
)


def paths(root: Path):
    base = st.sampled_from(["", str(root) + "/", str(root.parent) + "/", "/", str(root.parent / "outside") + "/"])
    return st.tuples(base, st.lists(SEGMENT, min_size=1, max_size=6)).map(lambda t: t[0] + "/".join(t[1]))


@settings(max_examples=150, deadline=None, suppress_health_check=FIXTURE_OK)
@given(data=st.data())
def test_resolve_never_leaves_the_root(jail, data):
    ws = jail.workspace
    path = data.draw(paths(ws.root))
    for write in (False, True):
        try:
            real = ws.resolve(path, write=write)
        except ToolError as exc:
            assert str(ws.root) in str(exc)
            continue
        assert real.is_relative_to(ws.root) and os.path.realpath(real) == str(real)
        if write:
            assert not real.is_relative_to(ws.root / ".nbagent")


@pytest.mark.process
@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(data=st.data())
async def test_no_tool_reads_or_writes_outside(jail, tmp_path, data):
    ws = jail.workspace
    path = data.draw(paths(ws.root))
    before = snapshot(tmp_path)
    for tool, args in [
        (READ_FILE, {"path": path}),
        (WRITE_FILE, {"path": path, "content": "PWNED\n"}),
        (EDIT_FILE, {"path": path, "old_string": SECRET, "new_string": "PWNED"}),
        (MULTI_EDIT, {"path": path, "edits": [{"old_string": "state", "new_string": "PWNED"}]}),
        (LIST_DIR, {"path": path, "depth": 3}),
        (GLOB, {"pattern": "**/*", "path": path}),
        (GREP_TOOL, {"pattern": "SECRET|state", "path": path}),
    ]:
        try:
            out = await call(jail, tool, **args)
        except ToolError:
            continue
        assert SECRET not in out, (tool.name, path)
    assert snapshot(tmp_path) == before, path


# --- multi_edit: all or nothing -------------------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "gamma", "\n", " ", "alpha beta", "\r\n", "é"])
MISSING = "«not in the file»"


def edit_for(content: str):
    """An edit whose old_string usually occurs in ``content`` (maybe more than once)."""
    old = st.one_of(
        st.integers(0, max(len(content) - 1, 0)).flatmap(
            lambda i: st.integers(1, 12).map(lambda n: content[i:i + n] or "alpha")
        ),
        WORDS,
    )
    return st.fixed_dictionaries(
        {"old_string": old, "new_string": st.lists(WORDS, max_size=3).map("".join)},
        optional={"replace_all": st.booleans()},
    )


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(data=st.data())
async def test_a_failing_edit_at_any_position_leaves_the_file_byte_identical(tmp_path, data):
    content = "".join(data.draw(st.lists(WORDS, min_size=1, max_size=40)))
    edits = data.draw(st.lists(edit_for(content), max_size=5))
    position = data.draw(st.integers(0, len(edits)))
    edits.insert(position, {"old_string": MISSING, "new_string": "x"})
    ctx = make_ctx(tmp_path)
    target = tmp_path / "f.txt"
    target.write_bytes(content.encode())
    os.chmod(target, 0o640)
    stat_before = target.stat()
    with pytest.raises(ToolError, match=r"edit \d+ of \d+: |not found|occurs|the same"):
        await call(ctx, MULTI_EDIT, path="f.txt", edits=edits)
    assert target.read_bytes() == content.encode()
    assert target.stat().st_mtime_ns == stat_before.st_mtime_ns and target.stat().st_ino == stat_before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(data=st.data())
async def test_random_edits_either_all_apply_or_none_do(tmp_path, data):
    content = "".join(data.draw(st.lists(WORDS, min_size=1, max_size=40)))
    edits = data.draw(st.lists(edit_for(content), min_size=1, max_size=5))
    ctx = make_ctx(tmp_path)
    target = tmp_path / "f.txt"
    target.write_bytes(content.encode())
    expected = content
    try:
        for e in edits:  # the reference: str.replace, one edit after another
            count = expected.count(e["old_string"])
            assert e["old_string"] and e["old_string"] != e["new_string"] and count
            assert count == 1 or e.get("replace_all")
            expected = expected.replace(e["old_string"], e["new_string"], -1 if e.get("replace_all") else 1)
    except AssertionError:
        expected = None
    try:
        await call(ctx, MULTI_EDIT, path="f.txt", edits=edits)
    except ToolError:
        assert target.read_bytes() == content.encode()
        if "\r\n" not in content:  # the CRLF retry can rescue an edit the plain reference rejects
            assert expected is None
        return
    if "\r\n" not in content:
        assert target.read_bytes() == expected.encode()
