"""Read-only git tools on a real repository made with GitPython."""

from __future__ import annotations

import git
import pytest

from nbagent.errors import ToolError
from nbagent.testing import tool_context
from nbagent.tools.git import GIT, git_blame, git_diff, git_log, git_show, git_status


@pytest.fixture
def repo(ctx):
    repo = git.Repo.init(ctx.workspace.root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Ada").set_value("user", "email", "ada@example.org")
    root = ctx.workspace.root
    (root / "app.py").write_text("a = 1\nb = 2\n")
    repo.index.add(["app.py"])
    repo.index.commit("first commit")
    (root / "app.py").write_text("a = 1\nb = 2\nc = 3\n")
    repo.index.add(["app.py"])
    repo.index.commit("add c")
    yield repo
    repo.close()


@pytest.mark.process
def test_status_shows_changes(ctx, repo):
    assert git_status(ctx) == "## main\nnothing to commit, working tree clean"
    (ctx.workspace.root / "app.py").write_text("a = 10\nb = 2\nc = 3\n")
    (ctx.workspace.root / "new.txt").write_text("new\n")
    assert git_status(ctx).splitlines() == ["## main", " M app.py", "?? new.txt"]


@pytest.mark.process
def test_diff_worktree_staged_and_against_a_ref(ctx, repo):
    assert git_diff(ctx) == "no differences"
    (ctx.workspace.root / "app.py").write_text("a = 10\nb = 2\nc = 3\n")
    diff = git_diff(ctx)
    assert "-a = 1\n+a = 10" in diff and "app.py | 2 +-" in diff
    assert git_diff(ctx, staged=True) == "no differences"
    repo.index.add(["app.py"])
    assert "+a = 10" in git_diff(ctx, staged=True)
    assert "+c = 3" in git_diff(ctx, ref="HEAD~1", path="app.py")


@pytest.mark.process
def test_log_show_and_blame(ctx, repo):
    lines = git_log(ctx).splitlines()
    assert [line.split(" ", 1)[1].split(" Ada ")[1] for line in lines] == ["(HEAD -> main) add c", "first commit"]
    assert len(git_log(ctx, max_count=1).splitlines()) == 1
    assert "first commit" in git_log(ctx, path="app.py")

    shown = git_show(ctx, "HEAD")
    assert "add c" in shown and "+c = 3" in shown and "Author:     Ada <ada@example.org>" in shown
    assert git_show(ctx, "HEAD~1", path="app.py") == "a = 1\nb = 2\n"

    blame = git_blame(ctx, "app.py", start_line=2, end_line=3).splitlines()
    assert len(blame) == 2 and blame[0].endswith("2) b = 2") and blame[1].endswith("3) c = 3")
    assert "(Ada" in blame[0]


@pytest.mark.process
def test_option_injection_and_paths_outside_are_refused(ctx, repo):
    with pytest.raises(ToolError, match="may not start with '-'"):
        git_diff(ctx, ref="--output=/tmp/owned")
    with pytest.raises(ToolError, match="may not start with '-'"):
        git_show(ctx, "--output=x")
    with pytest.raises(ToolError, match="outside the workspace"):
        git_blame(ctx, "../etc/passwd")
    with pytest.raises(ToolError, match="nope.* is not a commit"):
        git_show(ctx, "nope")
    with pytest.raises(ToolError, match="end_line must not be before start_line"):
        git_blame(ctx, "app.py", start_line=3, end_line=2)


@pytest.mark.process
def test_a_workspace_below_the_repository_top_sees_its_own_part(ctx, repo):
    sub = ctx.workspace.root / "pkg"
    sub.mkdir()
    (sub / "mod.py").write_text("x = 1\n")
    (ctx.workspace.root / "outside.txt").write_text("not ours\n")
    inner = tool_context(sub, state=False)
    assert git_status(inner).splitlines() == ["## main", "?? pkg/"]  # not outside.txt
    assert git_log(inner) == "no commits match"  # nothing under pkg/ was ever committed
    with pytest.raises(ToolError, match="outside the workspace"):
        git_show(inner, "HEAD", path="../app.py")  # the repository is bigger than the workspace


@pytest.mark.process
def test_empty_repository_and_no_repository(ctx):
    with pytest.raises(ToolError, match="not inside a git repository"):
        git_status(ctx)
    with pytest.raises(ToolError, match="not inside a git repository"):
        git_log(ctx)
    git.Repo.init(ctx.workspace.root).close()
    assert git_log(ctx) == "no commits yet"


def test_git_tools_run_without_asking():
    assert {t.name for t in GIT.tools} == {"git_status", "git_diff", "git_log", "git_show", "git_blame"}
    assert {t.approval for t in GIT.tools} == {"never"}
