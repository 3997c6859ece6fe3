"""Issue 26, finding 10: git config naming a FIFO or a file outside the repository (include.path,
core.attributesFile, mailmap.file, blame.ignoreRevsFile) neither hangs the read-only git tools nor
shows the outside file; every git call has a time limit."""

from __future__ import annotations

import os
import threading

import git
import pytest

from nbagent.errors import ToolError
from nbagent.tools.git import git_blame, git_log, git_status

pytestmark = pytest.mark.process


@pytest.fixture
def repo(ctx):
    root = ctx.workspace.root
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Ada").set_value("user", "email", "ada@example.org")
    (root / "a.txt").write_text("one\ntwo\n")
    repo.git.add("-A")
    repo.index.commit("first")
    yield repo
    repo.close()


def _within(seconds, call):
    """Run ``call`` on a thread; fail (instead of hanging the suite) if it has not returned in time."""
    box: dict = {}

    def run():
        try:
            box["value"] = call()
        except Exception as exc:  # the refusal is an outcome too
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the git tool hung on the repository's config"
    return box


@pytest.mark.parametrize("key", ["core.attributesFile", "mailmap.file", "blame.ignoreRevsFile"])
def test_a_fifo_named_by_the_config_does_not_hang_the_git_tools(ctx, repo, tmp_path, key):
    fifo = tmp_path / f"fifo-{key}"
    os.mkfifo(fifo)
    section, name = key.split(".")
    with repo.config_writer() as cfg:
        cfg.set_value(section, name, str(fifo))
    box = _within(20, lambda: (git_status(ctx), git_log(ctx)))
    assert "error" not in box, box.get("error")
    status, log = box["value"]
    assert "main" in status and "first" in log
    box = _within(20, lambda: git_blame(ctx, "a.txt"))
    if key == "blame.ignoreRevsFile":  # git reads it whatever the command line says: blame is refused
        assert isinstance(box.get("error"), ToolError) and "blame.ignorerevsfile" in str(box["error"])
    else:
        assert "two" in box["value"]


def test_an_include_of_a_fifo_refuses_the_repository_at_once(ctx, repo, tmp_path):
    fifo = tmp_path / "included"
    os.mkfifo(fifo)
    with repo.config_writer() as cfg:
        cfg.set_value("include", "path", str(fifo))
    box = _within(20, lambda: git_status(ctx))
    assert isinstance(box.get("error"), ToolError)
    assert "include.path" in str(box["error"]) and "no git command" in str(box["error"])


def test_an_ignore_revs_file_outside_the_repository_is_not_shown(ctx, repo, tmp_path):
    secret = tmp_path.parent / f"{tmp_path.name}-credentials"
    secret.write_text("https://ada:s3cr3t-token@git.example.org\n")
    with repo.config_writer() as cfg:
        cfg.set_value("blame", "ignoreRevsFile", str(secret))
    with pytest.raises(ToolError) as refused:
        git_blame(ctx, "a.txt")
    assert "s3cr3t-token" not in str(refused.value) and "not a regular file inside the repository" in str(refused.value)
    (ctx.workspace.root / "revs").write_text("")  # one inside the repository is used as before
    with repo.config_writer() as cfg:
        cfg.set_value("blame", "ignoreRevsFile", "revs")
    assert "two" in git_blame(ctx, "a.txt")
