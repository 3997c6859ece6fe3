"""Isolated copies of a workspace for batch tasks: a git worktree in a repository, a plain copy otherwise.

A task edits its own copy, so parallel tasks never collide, and its changes come back as a diff
against the snapshot it started from. The user's repository is treated as hostile and left as it
is: the snapshot is written through a temporary index (the user's HEAD, index and working tree are
never touched), and every git command runs with hooks, fsmonitor and the repository's filter
drivers switched off, so a repository's configuration cannot run a program.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

IDENTITY = ["-c", "user.name=nbagent batch", "-c", "user.email=nbagent@localhost"]
SAFE = ["-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=false", "-c", "core.autocrlf=false",
        "-c", "gc.auto=0", "-c", "maintenance.auto=false", "--no-pager"]


class IsolationError(RuntimeError):
    """The copy could not be made or read (the message says which git or file operation failed)."""


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """Run git with a fixed argv and the repository's programs disabled; returns stdout."""
    full_env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    full_env.pop("GIT_DIR", None)
    full_env.pop("GIT_WORK_TREE", None)
    argv = ["git", *SAFE, *_filter_overrides(cwd, full_env), *IDENTITY, *args]
    done = subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise IsolationError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()[:500]}")
    return done.stdout


def _filter_overrides(cwd: Path, env: dict[str, str]) -> list[str]:
    """``-c`` options that neutralise every filter driver the repository's config names.

    A clean/smudge/process filter is a command git runs on checkout and add; ``cat`` keeps the
    bytes as they are stored, which is what an isolated copy wants anyway.
    """
    argv = ["git", *SAFE, "config", "--get-regexp", r"^filter\..*\.(clean|smudge|process|required)$"]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    names = {line.split(" ", 1)[0].rsplit(".", 1)[0] for line in done.stdout.splitlines() if line}
    out: list[str] = []
    for name in sorted(names):
        out += ["-c", f"{name}.clean=cat", "-c", f"{name}.smudge=cat", "-c", f"{name}.process=",
                "-c", f"{name}.required=false"]
    return out


def repository_top(path: Path) -> Path | None:
    """The top of the git working tree holding ``path`` with at least one commit, else None."""
    try:
        top = git(path, "rev-parse", "--show-toplevel").strip()
        git(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except (IsolationError, OSError):
        return None
    return Path(top).resolve()


@dataclass
class IsolatedCopy:
    """One task's copy: ``workspace`` is where the agent works; ``diff()`` and ``changed()`` read it."""

    root: Path
    """The copy's top (a worktree or a copied directory); removed by ``remove()``."""
    workspace: Path
    base: str
    """The commit the copy started from."""
    repo: Path | None
    """The user's repository top when the copy is a worktree of it."""

    def _stage(self) -> None:
        git(self.root, "add", "-A", "--", ".")

    def changed(self) -> list[str]:
        """Paths (relative to the copy's top) that differ from the snapshot."""
        self._stage()
        out = git(self.root, "diff", "--cached", "--no-renames", "--name-only", "-z", self.base, "--")
        return [p for p in out.split("\0") if p]

    def diff(self) -> str:
        """The copy's changes as a unified diff against the snapshot (binary files as git binary patches)."""
        self._stage()
        return git(self.root, "diff", "--cached", "--no-ext-diff", "--no-textconv", "--binary", "--no-color",
                   self.base, "--")

    def remove(self) -> None:
        if self.repo is not None:
            git(self.repo, "worktree", "remove", "--force", "--force", str(self.root), check=False)
        shutil.rmtree(self.root, ignore_errors=True)
        if self.repo is not None:
            git(self.repo, "worktree", "prune", check=False)


def make_copy(workspace: Path, dest: Path) -> IsolatedCopy:
    """Make an isolated copy of ``workspace`` at ``dest`` (which must not exist yet)."""
    workspace = workspace.resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    # The copies' folder holds nothing but copies: git must never see them (not in the user's
    # status, not in the next task's snapshot).
    ignore = dest.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    top = repository_top(workspace)
    if top is not None:
        return _worktree(top, workspace, dest)
    return _plain_copy(workspace, dest)


def _worktree(top: Path, workspace: Path, dest: Path) -> IsolatedCopy:
    snapshot = snapshot_commit(top)
    git(top, "worktree", "add", "--detach", str(dest), snapshot)
    rel = workspace.relative_to(top)
    return IsolatedCopy(root=dest, workspace=dest / rel, base=snapshot, repo=top)


def snapshot_commit(top: Path) -> str:
    """A commit of the working tree as it is now (tracked changes and untracked, non-ignored files).

    Written through a temporary index file, so the user's index, HEAD and branches stay as they are;
    the commit is referenced by nothing and git's garbage collection drops it later.
    """
    with tempfile.TemporaryDirectory(prefix="nbagent-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(top, "read-tree", "HEAD", env=env)
        git(top, "add", "-A", "--", ".", env=env)
        tree = git(top, "write-tree", env=env).strip()
    head_tree = git(top, "rev-parse", "HEAD^{tree}").strip()
    head = git(top, "rev-parse", "HEAD").strip()
    if tree == head_tree:
        return head
    return git(top, "commit-tree", tree, "-p", head, "-m", "nbagent batch snapshot").strip()


def _plain_copy(workspace: Path, dest: Path) -> IsolatedCopy:
    """Copy regular files, directories and symlinks (as links); skip FIFOs, sockets and devices."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {".nbagent", ".git"} if Path(directory).resolve() == workspace else {".git"}
        for name in names:
            mode = os.lstat(os.path.join(directory, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                skipped.add(name)
        return skipped

    shutil.copytree(workspace, dest, symlinks=True, ignore=ignore)
    git(dest, "init", "-q")
    git(dest, "add", "-A", "--", ".")
    git(dest, "commit", "-q", "--allow-empty", "--no-verify", "-m", "nbagent batch baseline")
    base = git(dest, "rev-parse", "HEAD").strip()
    return IsolatedCopy(root=dest, workspace=dest, base=base, repo=None)
