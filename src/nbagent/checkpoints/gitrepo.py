"""Hardened git for checkpoints: a private git directory that shares the user's object store.

Checkpoint commands never read the repository's own configuration, hooks or
index. They run with ``GIT_DIR`` set to a private directory under
``checkpoints/git`` in the state directory (its own minimal config, an ``info/attributes``
that switches off every content filter and conversion), ``GIT_OBJECT_DIRECTORY``
set to the repository's object store (so the snapshots' blobs and trees live
where the repository's ``git gc`` sees them), ``GIT_INDEX_FILE`` set to a
private index, and ``GIT_WORK_TREE`` set to the repository's top. Only the
refs that pin the trees are written in the repository itself, with hooks
switched off. The user's global and system configuration are not read either.

Plain ``git`` subprocesses rather than GitPython: every call needs its own
environment (private index, private git directory) and byte-exact stdin and
stdout, which GitPython would only pass through.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import NbagentError
from ..workspace.atomic import atomic_write
from ..workspace.git_config import GIT_TIMEOUT, ConfigGuard, UnsafeGitConfig, common_dir, config_guard, locate
from ..workspace.safe_read import read_bytes
from ..workspace.state_dir import CHECKPOINTS, check_private_file, private_dir

EMPTY_ATTRIBUTES = "* -text -eol -ident -filter -diff -merge -working-tree-encoding -crlf\n"
"""Highest-precedence attributes: blobs hold the exact bytes of the files, no program runs."""

HARDENING = [
    "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false", "-c", "core.splitIndex=false", "-c", "core.sparseCheckout=false",
    "-c", "advice.addIgnoredFile=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
    "-c", "core.pager=cat", "-c", "diff.external=", "--no-pager",
]


CHECKPOINT_GIT_TIMEOUT = 600.0
"""Seconds a checkpoint's git command may take (the first snapshot of a large repository hashes it all)."""


class CheckpointError(NbagentError):
    """A checkpoint could not be taken or restored; the message says why and what to do."""


class GitRepo:
    """The repository holding a workspace, seen through nbagent's private git directory."""

    def __init__(self, top: Path, git_dir: Path, private: Path):
        self.top = top
        self.git_dir = git_dir
        self.private = private
        self.state_dir = private.parent.parent
        self.objects = common_dir(git_dir) / "objects"
        self.index = private / "index"
        self.guard = ConfigGuard()

    @classmethod
    def find(cls, workspace_root: Path, state_dir: Path) -> "GitRepo | None":
        """The repository above ``workspace_root`` (found by its ``.git``, not by asking git), or None."""
        located = locate(workspace_root)
        if located is None:
            return None
        repo = cls(located.top, located.git_dir, state_dir / CHECKPOINTS / "git")
        repo.state_dir = state_dir
        repo._prepare()
        return repo

    def _prepare(self) -> None:
        try:  # the repository's own config is read by the ref commands: nothing outside it, no FIFO
            self.guard = config_guard([self.git_dir, self.objects.parent], self.top)
        except UnsafeGitConfig as exc:
            raise CheckpointError(str(exc)) from None
        private = self._private()
        write_if_changed(private / "HEAD", "ref: refs/heads/nbagent-private\n")
        write_if_changed(private / "config", self._config())
        write_if_changed(private / "info" / "attributes", EMPTY_ATTRIBUTES)

    def _private(self) -> Path:
        """The private git directory, every level checked from the state directory down each time it
        is used: a link there (to another repository's .git) is refused, never written through."""
        for name in ("info", "refs", "objects"):  # git wants objects/; GIT_OBJECT_DIRECTORY overrides it
            private_dir(self.state_dir, CHECKPOINTS, "git", name)
        for name in ("HEAD", "config", "index"):
            check_private_file(self.private / name)
        return self.private

    def _config(self) -> str:
        lines = ["[core]", "\trepositoryformatversion = 1", "\tbare = false", "\tautocrlf = false",
                 "\tfilemode = true", "\tsymlinks = true", "\tlogAllRefUpdates = false"]
        object_format = _object_format(self.git_dir)
        if object_format != "sha1":
            lines += ["[extensions]", f"\tobjectFormat = {object_format}"]
        return "\n".join(lines) + "\n"

    def env(self) -> dict[str, str]:
        """The environment of a command on the private side (index, attributes, config)."""
        env = _base_env()
        env.update(GIT_DIR=str(self.private), GIT_WORK_TREE=str(self.top), GIT_INDEX_FILE=str(self.index),
                   GIT_OBJECT_DIRECTORY=str(self.objects))
        alternates = self.objects / "info" / "alternates"
        if alternates.is_file():  # the repository borrows objects: so do we (read only)
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = _alternates(alternates, self.objects)
        return env

    def run(self, *args: str, stdin: bytes | None = None, user_repo: bool = False) -> bytes:
        """Run git; ``user_repo`` runs against the repository's own directory (for refs only)."""
        if user_repo:
            env = _base_env()
            env.update(GIT_DIR=str(self.git_dir))
        else:
            self._private()
            env = self.env()
        excludes = ["-c", f"core.excludesFile={self.git_dir / 'info' / 'exclude'}"]
        try:
            done = subprocess.run(["git", *HARDENING, *self.guard.options, *excludes, *args], input=stdin, env=env,
                                  cwd=self.top, capture_output=True, check=False, timeout=CHECKPOINT_GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"git {args[0]} took more than {CHECKPOINT_GIT_TIMEOUT:.0f} s for a checkpoint "
                                  "and was stopped") from None
        except OSError as exc:
            raise CheckpointError(f"cannot run git for a checkpoint: {exc}") from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
            raise CheckpointError(f"git {args[0]} failed for a checkpoint: {message}")
        return done.stdout


def _base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_ATTR_NOSYSTEM="1",
               GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_NO_REPLACE_OBJECTS="1",
               GIT_PROTOCOL_FROM_USER="0", LC_ALL="C")
    return env


def _object_format(git_dir: Path) -> str:
    env = _base_env()
    env["GIT_DIR"] = str(git_dir)
    try:
        done = subprocess.run(["git", *HARDENING, "rev-parse", "--show-object-format"], env=env,
                              capture_output=True, check=False, timeout=GIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "sha1"
    if done.returncode != 0:
        return "sha1"
    return done.stdout.decode().strip() or "sha1"


def _alternates(path: Path, objects: Path) -> str:
    dirs = []
    for line in read_bytes(path, max_bytes=1 << 20)[0].decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            p = Path(line)
            dirs.append(str(p if p.is_absolute() else (objects / p).resolve()))
    return os.pathsep.join(dirs)


def write_if_changed(path: Path, text: str) -> None:
    """A private file of the checkpoints' git directory, rewritten (atomically, 0600) only when it differs."""
    try:
        if read_bytes(path)[0] == text.encode("utf-8"):
            return
    except OSError:
        pass
    atomic_write(path, text, private=True, fsync=False)
