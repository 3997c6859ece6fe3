"""Isolated copies of a workspace for batch tasks: a checkout of a snapshot commit in a repository, a plain copy otherwise.

A task edits its own copy, so parallel tasks never collide, and its changes come back as a diff
against the snapshot it started from. In a repository the copy is a repository of its own that
borrows the user's objects (git's alternates, read only) and checks the snapshot out: nothing is
registered in the user's repository (unlike ``git worktree add``, whose shared worktree list had to
be locked across processes and made 16 parallel tasks queue), and removing a copy is removing a
folder. The user's repository is treated as hostile and left as it is: the snapshot is written
through a temporary index (the user's HEAD, index and working tree are never touched), the copy's
own config is a fresh one, and every git command runs with hooks, fsmonitor and the repository's
filter drivers switched off, so a repository's configuration cannot run a program.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..workspace.state_dir import STATE_DIR

IDENTITY = ["-c", "user.name=nbagent batch", "-c", "user.email=nbagent@localhost"]
SAFE = ["-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=false", "-c", "core.autocrlf=false",
        "-c", "gc.auto=0", "-c", "maintenance.auto=false", "--no-pager"]


GIT_TIMEOUT = 600.0
"""Seconds a git command of a batch copy may take (a worktree of a large repository is slow, a hang is not)."""


class IsolationError(RuntimeError):
    """The copy could not be made or read (the message says which git or file operation failed)."""


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
        overrides: list[str] | None = None, options: list[str] | None = None) -> str:
    """Run git with a fixed argv and the repository's programs disabled; returns stdout.

    ``overrides`` are the repository's filter drivers neutralised (``filter_overrides``), computed
    once per repository by the caller; None looks them up for this call. ``options`` are more ``-c``
    settings (left out of the error message, which names the command).
    """
    full_env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    full_env.pop("GIT_DIR", None)
    full_env.pop("GIT_WORK_TREE", None)
    if overrides is None:
        overrides = filter_overrides(cwd)
    argv = ["git", *SAFE, *overrides, *IDENTITY, *(options or []), *args]
    try:
        done = subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise IsolationError(f"git {' '.join(args)} took more than {GIT_TIMEOUT:.0f} s in {cwd} and was stopped") from None
    if check and done.returncode != 0:
        raise IsolationError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()[:500]}")
    return done.stdout


def filter_overrides(cwd: Path) -> list[str]:
    """``-c`` options that neutralise every filter driver the repository's config names.

    A clean/smudge/process filter is a command git runs on checkout and add; ``cat`` keeps the
    bytes as they are stored, which is what an isolated copy wants anyway.
    """
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    argv = ["git", *SAFE, "config", "--get-regexp", r"^filter\..*\.(clean|smudge|process|required)$"]
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=GIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise IsolationError(f"git config took more than {GIT_TIMEOUT:.0f} s in {cwd} and was stopped") from None
    names = {line.split(" ", 1)[0].rsplit(".", 1)[0] for line in done.stdout.splitlines() if line}
    out: list[str] = []
    for name in sorted(names):
        out += ["-c", f"{name}.clean=cat", "-c", f"{name}.smudge=cat", "-c", f"{name}.process=",
                "-c", f"{name}.required=false"]
    return out


def repository_top(path: Path) -> Path | None:
    """The top of the git working tree holding ``path`` with at least one commit, else None."""
    try:
        top = git(path, "rev-parse", "--show-toplevel", "HEAD^{commit}", overrides=[]).splitlines()[0]
    except (IsolationError, OSError, IndexError):
        return None
    return Path(top).resolve()


@dataclass(frozen=True)
class Source:
    """What every copy of one batch starts from: a commit of the user's repository, or a folder."""

    workspace: Path
    top: Path | None = None
    """The repository's top, when the workspace is inside a repository with a commit."""
    commit: str = ""
    """The snapshot commit (git), taken once so that every task starts from the same files."""
    overrides: tuple[str, ...] = ()
    objects: str = ""
    """The object store holding ``commit``, which every copy borrows (read only)."""
    size: int = 0
    """Bytes of the files a copy holds (the commit's tree, or the folder's files): where copies fit."""


def snapshot(workspace: Path) -> Source:
    """Take the batch's starting point: a snapshot commit in a repository, else the folder itself."""
    workspace = workspace.resolve()
    top = repository_top(workspace)
    if top is None:
        return Source(workspace=workspace, size=folder_size(workspace))
    overrides = filter_overrides(top)
    commit = snapshot_commit(top, overrides)
    return Source(workspace=workspace, top=top, commit=commit, overrides=tuple(overrides),
                  objects=object_store(top, overrides), size=tree_size(top, commit, overrides))


def tree_size(top: Path, commit: str, overrides: list[str] | None = None) -> int:
    """Bytes of the files in ``commit``'s tree (what a checkout of it writes)."""
    out = git(top, "ls-tree", "-r", "-l", "-z", commit, overrides=overrides)
    total = 0
    for record in out.split("\0"):
        size = record.split("\t", 1)[0].split()[-1:] if record else []
        if size and size[0].isdigit():  # "-" for a submodule, which a checkout leaves empty
            total += int(size[0])
    return total


def folder_size(workspace: Path) -> int:
    """Bytes of the regular files a plain copy of ``workspace`` takes (links not followed)."""
    total = 0
    for directory, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if d not in (".git", STATE_DIR)]
        for name in files:
            try:
                info = os.lstat(os.path.join(directory, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
    return total


def object_store(top: Path, overrides: list[str] | None = None) -> str:
    """The absolute path of the repository's object database (shared by its worktrees)."""
    common = git(top, "rev-parse", "--path-format=absolute", "--git-common-dir", overrides=overrides).strip()
    return str(Path(common) / "objects")


@dataclass
class IsolatedCopy:
    """One task's copy: ``workspace`` is where the agent works; ``changes()`` reads it."""

    root: Path
    """The copy's top (a checkout or a copied directory, each with a .git of its own); removed by
    ``remove()``."""
    workspace: Path
    base: str
    """The commit the copy started from."""
    overrides: list[str]

    def changes(self) -> tuple[list[str], str]:
        """The paths (relative to the copy's top) that differ from the snapshot, and the unified diff
        (binary files as git binary patches)."""
        git(self.root, "add", "-A", "--", ".", overrides=self.overrides)
        # One git for both: the raw records (":modes ids status\0path\0", one path each without rename
        # detection), a NUL, then the patch, which holds no NUL (binary files come as base85).
        out = git(self.root, "diff", "--cached", "--no-renames", "--no-ext-diff", "--no-textconv", "--binary",
                  "--no-color", "-z", "--raw", "-p", self.base, "--", overrides=self.overrides)
        raw, _, diff = out.partition("\0\0")
        fields = raw.split("\0")
        return [path for path in fields[1::2] if path], diff

    def changed(self) -> list[str]:
        return self.changes()[0]

    def diff(self) -> str:
        return self.changes()[1]

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def make_copy(source: Path | Source, dest: Path) -> IsolatedCopy:
    """Make an isolated copy at ``dest`` (which must not exist yet) of a snapshot or a workspace."""
    if isinstance(source, Path):
        source = snapshot(source)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # The copies' folder holds nothing but copies: git must never see them (not in the user's
    # status, not in the next task's snapshot).
    ignore = dest.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    if source.top is None:
        return _plain_copy(source.workspace, dest)
    overrides = list(source.overrides)
    checkout(dest, source.objects, source.commit, overrides)
    rel = source.workspace.relative_to(source.top)
    copy = IsolatedCopy(root=dest, workspace=dest / rel, base=source.commit, overrides=overrides)
    if not copy.workspace.is_dir():  # a git_url repository without the workspace's folder
        copy.remove()
        raise IsolationError(f"commit {source.commit} has no folder {rel.as_posix()} to work in")
    return copy


def checkout(dest: Path, objects: str, commit: str, overrides: list[str]) -> None:
    """A new repository at ``dest`` whose HEAD is ``commit`` (detached), checked out, reading the
    objects of ``objects`` through alternates (new objects go to its own store)."""
    init_repository(dest, objects)
    git(dest, "checkout", "-q", "--detach", commit, overrides=overrides)


REPOSITORY_CONFIG = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                     "\tlogallrefupdates = true\n")


def init_repository(dest: Path, objects: str) -> None:
    """What ``git init --template=`` makes (format 0: the layout every git reads), and the alternates
    file pointing at ``objects``. Written here because a batch makes one per task: a git process
    less per task, about 3 ms of CPU, and a copy made that much sooner."""
    dot_git = dest / ".git"
    for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (dot_git / folder).mkdir(parents=True)
    (dot_git / "HEAD").write_text("ref: refs/heads/master\n", encoding="utf-8")
    (dot_git / "config").write_text(REPOSITORY_CONFIG, encoding="utf-8")
    (dot_git / "objects" / "info" / "alternates").write_text(objects + "\n", encoding="utf-8")


def snapshot_commit(top: Path, overrides: list[str] | None = None) -> str:
    """A commit of the working tree as it is now (tracked changes and untracked, non-ignored files).

    Written through a temporary index file, so the user's index, HEAD and branches stay as they are;
    the commit is referenced by nothing and git's garbage collection drops it later.
    """
    with tempfile.TemporaryDirectory(prefix="nbagent-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(top, "read-tree", "HEAD", env=env, overrides=overrides)
        git(top, "add", "-A", "--", ".", env=env, overrides=overrides)
        tree = git(top, "write-tree", env=env, overrides=overrides).strip()
    head, head_tree = git(top, "rev-parse", "HEAD", "HEAD^{tree}", overrides=overrides).split()
    if tree == head_tree:
        return head
    return git(top, "commit-tree", tree, "-p", head, "-m", "nbagent batch snapshot", overrides=overrides).strip()


def _plain_copy(workspace: Path, dest: Path) -> IsolatedCopy:
    """Copy regular files, directories and symlinks (as links); skip FIFOs, sockets and devices."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {STATE_DIR, ".git"} if Path(directory).resolve() == workspace else {".git"}
        for name in names:
            mode = os.lstat(os.path.join(directory, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                skipped.add(name)
        return skipped

    shutil.copytree(workspace, dest, symlinks=True, ignore=ignore)
    # A repository of our own in the copy: its baseline commit is what the task's diff is taken against.
    git(dest, "init", "-q", overrides=[])
    git(dest, "add", "-A", "--", ".", overrides=[])
    git(dest, "commit", "-q", "--allow-empty", "--no-verify", "-m", "nbagent batch baseline", overrides=[])
    base = git(dest, "rev-parse", "HEAD", overrides=[]).strip()
    return IsolatedCopy(root=dest, workspace=dest, base=base, overrides=[])
