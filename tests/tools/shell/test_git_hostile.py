"""The git tools against hostile repositories: nothing from the repository's config runs, nothing
outside the workspace is shown (security review findings 3 and 4)."""

from __future__ import annotations

import os

import git
import pytest

from nbagent.errors import ToolError
from nbagent.tools.git import git_blame, git_diff, git_log, git_show, git_status

pytestmark = pytest.mark.process


def _commit_all(repo: git.Repo, message: str) -> None:
    repo.git.add("-A")
    repo.index.commit(message)


@pytest.fixture
def hostile(ctx):
    """A repository whose .gitattributes and .git/config ask for textconv, filters and an external diff."""
    root = ctx.workspace.root
    repo = git.Repo.init(root, initial_branch="main")
    marker = root.parent / "PWNED"
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Ada").set_value("user", "email", "ada@example.org")
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (root / "a.txt").write_text("one\n")
    _commit_all(repo, "first")
    (root / "a.txt").write_text("one\ntwo\n")
    _commit_all(repo, "second")
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    # The hostile configuration comes last (a cloned repository with a planted .git/config).
    with repo.config_writer() as cfg:
        run = f"touch {marker}; cat"
        cfg.set_value('filter "evil"', "clean", run).set_value('filter "evil"', "smudge", run)
        cfg.set_value('filter "evil"', "process", f"touch {marker}")
        cfg.set_value('filter "evil"', "required", "true")
        cfg.set_value('diff "evil"', "textconv", f"sh -c 'touch {marker}; cat \"$0\"'")
        cfg.set_value('diff "evil"', "command", f"touch {marker}")
        cfg.set_value("diff", "external", f"touch {marker}")
        cfg.set_value("log", "showSignature", "true")
        cfg.set_value("gpg", "program", f"touch {marker}")
        cfg.set_value("core", "pager", f"touch {marker}")
    os.utime(root / "a.txt", (1, 1))  # an old mtime against a fresh index: git must re-read (and filter) it
    yield repo, marker
    repo.close()


def test_no_git_tool_runs_a_command_from_the_repository_config(ctx, hostile):
    repo, marker = hostile
    calls = [
        lambda: git_status(ctx), lambda: git_diff(ctx), lambda: git_diff(ctx, ref="HEAD~1"),
        lambda: git_diff(ctx, staged=True), lambda: git_log(ctx), lambda: git_show(ctx, "HEAD"),
        lambda: git_show(ctx, "HEAD", path="a.txt"), lambda: git_blame(ctx, "a.txt"),
    ]
    for call in calls:
        try:
            call()
        except ToolError:
            pass  # refusing is allowed; running the repository's command is not
        assert not marker.exists(), f"a repository command ran through {call}"


def test_diffs_still_show_the_real_change(ctx, hostile):
    assert "+three" in git_diff(ctx)
    assert "+two" in git_show(ctx, "HEAD")
    assert git_show(ctx, "HEAD~1", path="a.txt") == "one\n"


@pytest.fixture
def nested(ctx):
    """The workspace is pkg/ inside a repository that also holds private files."""
    top = ctx.workspace.root
    repo = git.Repo.init(top, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Ada").set_value("user", "email", "ada@example.org")
    (top / "private.txt").write_text("the secret\n")
    (top / "pkg").mkdir()
    (top / "pkg" / "mod.py").write_text("x = 1\n")
    _commit_all(repo, "both")
    (top / "private.txt").write_text("the secret, changed\n")
    (top / "pkg" / "mod.py").write_text("x = 2\n")
    _commit_all(repo, "change both")
    from nbagent.workspace.root import Workspace

    ctx.workspace = Workspace(top / "pkg")
    yield repo
    repo.close()


@pytest.mark.parametrize("ref", ["HEAD:../private.txt", "HEAD:private.txt", "HEAD:./../private.txt"])
def test_git_show_refuses_blob_paths_in_the_ref(ctx, nested, ref):
    with pytest.raises(ToolError):
        out = git_show(ctx, ref)
        assert "secret" not in out


def test_git_show_of_a_blob_id_outside_is_refused(ctx, nested):
    blob = nested.git.rev_parse("HEAD:private.txt")
    with pytest.raises(ToolError, match="not a commit"):
        git_show(ctx, blob)
    tree = nested.git.rev_parse("HEAD^{tree}")
    with pytest.raises(ToolError, match="not a commit"):
        git_show(ctx, tree)


def test_whole_commit_patches_and_diffs_stay_inside_the_workspace(ctx, nested):
    shown = git_show(ctx, "HEAD")
    assert "x = 2" in shown and "secret" not in shown and "private.txt" not in shown
    for out in (git_diff(ctx, ref="HEAD~1"), git_diff(ctx, ref="HEAD~1..HEAD"), git_log(ctx)):
        assert "secret" not in out and "private.txt" not in out
    with pytest.raises(ToolError):
        git_diff(ctx, ref="HEAD~1:../private.txt")
    assert git_show(ctx, "HEAD~1", path="mod.py") == "x = 1\n"
