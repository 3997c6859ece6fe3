"""Hardened git for checkpoints: a private git directory that shares the user's object store.

Checkpoint commands never read the repository's own configuration, hooks or
index. They run with ``GIT_DIR`` set to a private directory under
``.nbagent/checkpoints/git`` (its own minimal config, an ``info/attributes``
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

EMPTY_ATTRIBUTES = "* -text -eol -ident -filter -diff -merge -working-tree-encoding -crlf\n"
"""Highest-precedence attributes: blobs hold the exact bytes of the files, no program runs."""

HARDENING = [
    "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false", "-c", "core.splitIndex=false", "-c", "core.sparseCheckout=false",
    "-c", "advice.addIgnoredFile=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
    "-c", "core.pager=cat", "-c", "diff.external=", "--no-pager",
]


class CheckpointError(NbagentError):
    """A checkpoint could not be taken or restored; the message says why and what to do."""


class GitRepo:
    """The repository holding a workspace, seen through nbagent's private git directory."""

    def __init__(self, top: Path, git_dir: Path, private: Path):
        self.top = top
        self.git_dir = git_dir
        self.private = private
        self.objects = _objects_dir(git_dir)
        self.index = private / "index"

    @classmethod
    def find(cls, workspace_root: Path, state_dir: Path) -> "GitRepo | None":
        """The repository above ``workspace_root`` (found by its ``.git``, not by asking git), or None."""
        for top in (workspace_root, *workspace_root.parents):
            dot = top / ".git"
            if dot.is_dir() and (dot / "objects").is_dir():
                git_dir = dot
            elif dot.is_file():
                git_dir = _gitdir_from_file(dot)
                if git_dir is None:
                    continue
            else:
                continue
            repo = cls(top, git_dir.resolve(), state_dir / "checkpoints" / "git")
            repo._prepare()
            return repo
        return None

    def _prepare(self) -> None:
        private = self.private
        (private / "info").mkdir(parents=True, exist_ok=True)
        (private / "refs").mkdir(exist_ok=True)
        (private / "objects").mkdir(exist_ok=True)  # git wants one; GIT_OBJECT_DIRECTORY overrides it
        write_if_changed(private / "HEAD", "ref: refs/heads/nbagent-private\n")
        write_if_changed(private / "config", self._config())
        write_if_changed(private / "info" / "attributes", EMPTY_ATTRIBUTES)

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
            env = self.env()
        excludes = ["-c", f"core.excludesFile={self.git_dir / 'info' / 'exclude'}"]
        try:
            done = subprocess.run(["git", *HARDENING, *excludes, *args], input=stdin, env=env,
                                  cwd=self.top, capture_output=True, check=False)
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


def _gitdir_from_file(dot_git: Path) -> Path | None:
    """A worktree's or submodule's ``.git`` file: "gitdir: <path>"."""
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    path = Path(text[len("gitdir:"):].strip())
    path = path if path.is_absolute() else dot_git.parent / path
    return path if path.is_dir() else None


def _objects_dir(git_dir: Path) -> Path:
    """A linked worktree's objects live in the common directory."""
    common = git_dir / "commondir"
    if common.is_file():
        base = Path(common.read_text(encoding="utf-8").strip())
        git_dir = base if base.is_absolute() else (git_dir / base).resolve()
    return git_dir / "objects"


def _object_format(git_dir: Path) -> str:
    env = _base_env()
    env["GIT_DIR"] = str(git_dir)
    done = subprocess.run(["git", *HARDENING, "rev-parse", "--show-object-format"], env=env,
                          capture_output=True, check=False)
    if done.returncode != 0:
        return "sha1"
    return done.stdout.decode().strip() or "sha1"


def _alternates(path: Path, objects: Path) -> str:
    dirs = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            p = Path(line)
            dirs.append(str(p if p.is_absolute() else (objects / p).resolve()))
    return os.pathsep.join(dirs)


def write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.write_text(text, encoding="utf-8")
