"""Isolated copies: worktrees that leave the user's repository alone, copies that skip what is not a file."""

from __future__ import annotations

import pytest
import os
import stat

from nbagent.batching.isolation import make_copy

from .conftest import git

pytestmark = pytest.mark.process


def _repo_state(root):
    return (git(root, "rev-parse", "HEAD"), (root / ".git" / "index").read_bytes(),
            git(root, "--no-optional-locks", "status", "--porcelain"), git(root, "branch", "--list"))


def test_worktree_starts_from_uncommitted_work_and_leaves_head_and_index_alone(repo):
    (repo / "src" / "util.py").write_text("def f():\n    return 2\n")  # a change not committed
    (repo / "notes.md").write_text("untracked\n")
    before = _repo_state(repo)
    copy = make_copy(repo / "src", repo / ".nbagent" / "batch" / "b1" / "task-0")
    try:
        assert copy.workspace == copy.root / "src"
        assert (copy.workspace / "util.py").read_text() == "def f():\n    return 2\n"
        assert (copy.root / "notes.md").read_text() == "untracked\n"
        assert copy.changed() == [] and copy.diff() == ""
        # The copy's repository (written by hand, as git init writes it) is one git reads as its own.
        assert git(copy.root, "rev-parse", "--git-dir").strip() == ".git"
        assert git(copy.root, "rev-parse", "HEAD").strip() == git(copy.root, "rev-parse", "HEAD^{commit}").strip()
        git(copy.root, "fsck", "--connectivity-only", "--no-progress")  # the borrowed objects reach HEAD
        (copy.workspace / "util.py").write_text("def f():\n    return 3\n")
        (copy.workspace / "new.py").write_text("x = 1\n")
        assert sorted(copy.changed()) == ["src/new.py", "src/util.py"]
        assert "-    return 2\n+    return 3" in copy.diff()
        assert _repo_state(repo) == before  # HEAD, index, status and branches as they were
    finally:
        copy.remove()
    assert not copy.root.exists()
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert _repo_state(repo) == before


def test_a_hostile_repository_runs_nothing(repo, tmp_path):
    marker = tmp_path / "ran"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git(repo, "config", "filter.evil.smudge", f"touch {marker}; cat")
    git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(repo, "config", "filter.evil.required", "true")
    git(repo, "config", "core.fsmonitor", f"touch {marker}; true")
    (repo / ".gitattributes").write_text("*.py filter=evil\n")
    copy = make_copy(repo, tmp_path / "copy")
    try:
        (copy.workspace / "src" / "util.py").write_text("changed\n")
        assert "src/util.py" in copy.changed()
    finally:
        copy.remove()
    assert not marker.exists()


def test_a_plain_copy_keeps_links_as_links_and_skips_fifos(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.csv").write_text("a,b\n")
    (work / "outside").symlink_to("/etc/passwd")
    os.mkfifo(work / "pipe")
    (work / ".nbagent").mkdir()
    (work / ".nbagent" / "nbagent.db").write_text("not copied")
    copy = make_copy(work, work / ".nbagent" / "batch" / "b" / "task-0")
    try:
        assert (copy.workspace / "outside").is_symlink()
        assert os.readlink(copy.workspace / "outside") == "/etc/passwd"
        assert not (copy.workspace / "pipe").exists() and not (copy.workspace / ".nbagent" / "nbagent.db").exists()
        (copy.workspace / "data.csv").write_text("a,b\n1,2\n")
        assert copy.changed() == ["data.csv"] and "+1,2" in copy.diff()
    finally:
        copy.remove()
    assert stat.S_ISFIFO(os.lstat(work / "pipe").st_mode) and (work / "data.csv").read_text() == "a,b\n"


def test_odd_names_and_binary_files_come_back_as_names_and_a_diff_that_applies(repo, tmp_path):
    copy = make_copy(repo, tmp_path / "copy")
    try:
        (copy.workspace / "with space\nand newline.txt").write_text("odd\n")
        (copy.workspace / "blob.bin").write_bytes(bytes(range(256)))
        (copy.workspace / "README.md").unlink()
        names, diff = copy.changes()
        assert sorted(names) == ["README.md", "blob.bin", "with space\nand newline.txt"]
        assert "GIT binary patch" in diff and "\0" not in diff
    finally:
        copy.remove()
    check = tmp_path / "check"
    git(tmp_path, "clone", "-q", str(repo), str(check))
    (tmp_path / "task.diff").write_text(diff)
    git(check, "apply", "--index", str(tmp_path / "task.diff"))
    assert (check / "blob.bin").read_bytes() == bytes(range(256)) and not (check / "README.md").exists()
