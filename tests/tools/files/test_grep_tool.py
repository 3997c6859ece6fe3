"""grep: the ripgrep wheel's rg as a fixed argv, workspace-relative, ignore-aware and capped."""

from __future__ import annotations

import pytest

from .files_helpers import call, git_init, write
from nbagent.errors import ToolError
from nbagent.tools.search import GREP_TOOL

pytestmark = pytest.mark.process


@pytest.fixture
def project(root):
    write(root, {
        ".gitignore": "build/\n*.log\n",
        "src/app.py": "import os\n\ndef main():\n    return os.getcwd()\n",
        "src/util.py": "def helper():\n    return 'Main'\n",
        "docs/guide.md": "Run main() to start.\n",
        "build/out.py": "def main(): pass\n",
        "debug.log": "main\n",
        ".config/settings.toml": "main = true\n",
    })
    return root


def lines(out: str) -> list[str]:
    return sorted(out.splitlines())


async def test_grep_prints_workspace_relative_matches(ctx, project):
    out = await call(ctx, GREP_TOOL, pattern=r"def \w+")
    assert lines(out) == ["src/app.py:3:def main():", "src/util.py:1:def helper():"]


async def test_grep_skips_ignored_files_but_searches_hidden_ones(ctx, project):
    git_init(project)
    out = await call(ctx, GREP_TOOL, pattern="main")
    assert lines(out) == [
        ".config/settings.toml:1:main = true", "docs/guide.md:1:Run main() to start.", "src/app.py:3:def main():",
    ]
    assert ".git/" not in await call(ctx, GREP_TOOL, pattern="HEAD|ref")


async def test_grep_path_glob_and_case(ctx, project):
    assert lines(await call(ctx, GREP_TOOL, pattern="main", path="src")) == ["src/app.py:3:def main():"]
    assert await call(ctx, GREP_TOOL, pattern="main", path="src/app.py") == "src/app.py:3:def main():"
    assert lines(await call(ctx, GREP_TOOL, pattern="main", glob="*.md")) == ["docs/guide.md:1:Run main() to start."]
    assert lines(await call(ctx, GREP_TOOL, pattern="MAIN", path="src", ignore_case=True)) == [
        "src/app.py:3:def main():", "src/util.py:2:    return 'Main'",
    ]


async def test_grep_context_lines(ctx, project):
    out = await call(ctx, GREP_TOOL, pattern="getcwd", context=1)
    assert out.splitlines() == ["src/app.py-3-def main():", "src/app.py:4:    return os.getcwd()"]


async def test_grep_caps_results_and_says_so(ctx, root):
    write(root, {"many.txt": "hit\n" * 50})
    out = await call(ctx, GREP_TOOL, pattern="hit", max_results=5)
    assert out.splitlines()[:5] == [f"many.txt:{i}:hit" for i in range(1, 6)]
    assert out.splitlines()[-1].startswith("[stopped after 5 matching lines; there are more")
    full = await call(ctx, GREP_TOOL, pattern="hit", max_results=50)
    assert "stopped" not in full and len(full.splitlines()) == 50


async def test_grep_no_match_and_bad_regex(ctx, project):
    assert await call(ctx, GREP_TOOL, pattern="zzz_nothing") == "No matches for 'zzz_nothing' in the workspace"
    with pytest.raises(ToolError, match="regex parse error"):
        await call(ctx, GREP_TOOL, pattern="(unclosed")


async def test_grep_stays_inside_the_workspace(ctx, project):
    (project.parent / "outside.txt").write_text("main\n")
    (project / "out_link").symlink_to(project.parent)
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(ctx, GREP_TOOL, pattern="main", path="..")
    assert "outside.txt" not in await call(ctx, GREP_TOOL, pattern="main")


async def test_grep_never_goes_through_a_shell(ctx, root):
    write(root, {"a.txt": "x\n"})
    await call(ctx, GREP_TOOL, pattern="$(touch pwned)`touch pwned2`; touch pwned3", glob="*; touch pwned4")
    assert not list(root.glob("pwned*"))


async def test_grep_reads_a_long_line_as_a_preview(ctx, root):
    write(root, {"min.js": "a" * 10_000 + "needle" + "b" * 10_000 + "\n"})
    out = await call(ctx, GREP_TOOL, pattern="needle")
    assert out.startswith("min.js:1:aaaa") and len(out) < 1000


async def test_grep_with_a_glob_matching_no_file(ctx, project):
    out = await call(ctx, GREP_TOOL, pattern="main", glob="*.rs")
    assert out.startswith("No files to search in the workspace match the glob '*.rs'")
