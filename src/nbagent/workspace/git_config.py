"""What a repository's own git configuration may make git read: nothing outside it, and no FIFO.

A cloned repository's ``.git/config`` is workspace input. It can name files git then reads while
"only reading": ``include.path`` (and ``includeIf.*.path``), ``core.attributesFile``,
``mailmap.file``, ``blame.ignoreRevsFile``, ``core.excludesFile``, ``commit.template``. A FIFO
there hangs git forever; a file outside the repository can leak into the output (git blame prints
the first line of an ignore-revs file it cannot parse). So before git runs, the configuration files
are read here through the safe read and parsed by git itself from stdin (``--no-includes``): an
include naming anything but a regular file inside the repository refuses the repository; any other
file key that does so is switched off with ``-c`` options (or, when git offers no way to, the command
reading it is refused).
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ToolError
from .safe_read import read_bytes

GIT_TIMEOUT = 60.0
"""Seconds any git command nbagent runs may take before it is killed (a hang is never waited out)."""
CONFIG_MAX_BYTES = 1 << 20
MAX_INCLUDE_DEPTH = 10
FILE_KEYS = {
    "core.attributesfile": "/dev/null", "mailmap.file": "/dev/null", "core.excludesfile": "/dev/null",
    "commit.template": "/dev/null", "blame.ignorerevsfile": None,
}
"""Keys whose value names a file git reads, and the value that switches each off (None: nothing can;
git blame reads every ignore-revs file configured, whatever ``-c`` or ``--ignore-revs-file`` say)."""
CLEAN_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
             "LC_ALL": "C"}


class UnsafeGitConfig(ToolError):
    """The repository's configuration includes a file outside it (or not a regular file): git is not run."""


@dataclass
class ConfigGuard:
    options: list[str] = field(default_factory=list)
    """``-c`` options switching off the file keys that name a file outside the repository."""
    unsafe: dict[str, str] = field(default_factory=dict)
    """Keys that cannot be switched off -> the refusal for a command that would read them."""

    def check(self, key: str) -> None:
        """Refuse a command that reads ``key`` when the repository set it to an unsafe file."""
        if key in self.unsafe:
            raise UnsafeGitConfig(self.unsafe[key])


def config_guard(git_dirs: list[Path], top: Path) -> ConfigGuard:
    """What makes git read only files inside ``top`` and ``git_dirs`` (the repository's git directory,
    and its common directory for a linked worktree); raises UnsafeGitConfig for an include outside."""
    inside = [Path(os.path.realpath(p)) for p in (top, *git_dirs)]
    guard = ConfigGuard()
    for git_dir in dict.fromkeys(git_dirs):
        for name in ("config", "config.worktree"):
            for key, value in _entries(Path(git_dir) / name, inside, Path(git_dir), 0):
                if key not in FILE_KEYS or _safe_file(_where(value, top), inside):
                    continue
                off = FILE_KEYS[key]
                if off is None:
                    guard.unsafe[key] = (f"the repository's git config sets {key} to {value!r}, which is not a "
                                         "regular file inside the repository: nbagent does not run the git "
                                         f"command that reads it (remove the {key} setting to use it)")
                else:
                    guard.options += ["-c", f"{key}={off}"]
    return guard


def _entries(path: Path, inside: list[Path], base: Path, depth: int) -> list[tuple[str, str]]:
    """(key, value) of the config file ``path`` and of the files it includes (each checked first)."""
    try:
        data = read_bytes(path, max_bytes=CONFIG_MAX_BYTES)[0]
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UnsafeGitConfig(f"the repository's git config {path} cannot be read safely ({exc}); "
                              "nbagent runs no git command on this repository") from None
    entries = _parse(data, path)
    found: list[tuple[str, str]] = []
    for key, value in entries:
        if key == "include.path" or (key.startswith("includeif.") and key.endswith(".path")):
            target = _where(value, path.parent)
            if depth >= MAX_INCLUDE_DEPTH or not _safe_file(target, inside):
                raise UnsafeGitConfig(
                    f"the repository's git config ({path}) includes {value!r}, which is not a regular file "
                    "inside the repository: nbagent runs no git command on this repository (remove the "
                    f"{key} setting to use it)")
            found += _entries(target, inside, base, depth + 1)
        else:
            found.append((key, value))
    return found


def _parse(data: bytes, path: Path) -> list[tuple[str, str]]:
    """git's own reading of one config file, given on stdin (includes are not followed there)."""
    try:
        # Outside any repository (git would read the one around its directory first), and
        # --no-includes: given on stdin, a file's includes would be followed otherwise.
        done = subprocess.run(["git", "config", "--no-includes", "--file", "-", "--null", "--list"], input=data,
                              capture_output=True, timeout=GIT_TIMEOUT, check=False, cwd=os.path.sep,
                              env={**os.environ, **CLEAN_ENV, "GIT_CEILING_DIRECTORIES": os.path.sep})
    except FileNotFoundError:
        raise  # no git here: the caller says so in its own words
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnsafeGitConfig(f"cannot read the repository's git config {path} ({exc})") from None
    if done.returncode != 0:
        return []  # git itself will report a broken config when it runs
    pairs = []
    for item in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = item.partition("\n")
        if key:
            pairs.append((key.lower(), value))
    return pairs


def _where(value: str, base: Path) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def _safe_file(path: Path, inside: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    if not any(real.is_relative_to(folder) for folder in inside):
        return False
    try:
        return stat.S_ISREG(os.stat(real).st_mode)
    except OSError:
        return True  # a missing file is read as empty by git: nothing to leak, nothing to block on


@dataclass
class Located:
    """The repository holding a folder, found by its ``.git`` without asking git (nor reading config)."""

    top: Path
    git_dir: Path
    common_dir: Path


def locate(start: Path) -> Located | None:
    """The repository at ``start`` or above it (a ``.git`` folder, or a worktree's ``.git`` file)."""
    for top in (start, *start.parents):
        dot = top / ".git"
        if dot.is_dir() and (dot / "objects").is_dir():
            git_dir = dot
        elif dot.is_file():
            found = _gitdir_from_file(dot)
            if found is None:
                continue
            git_dir = found
        else:
            continue
        git_dir = git_dir.resolve()
        return Located(top, git_dir, common_dir(git_dir))
    return None


def _gitdir_from_file(dot_git: Path) -> Path | None:
    """A worktree's or submodule's ``.git`` file: "gitdir: <path>"."""
    try:
        text = read_bytes(dot_git, max_bytes=4096)[0].decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    path = Path(text[len("gitdir:"):].strip())
    path = path if path.is_absolute() else dot_git.parent / path
    return path if path.is_dir() else None


def common_dir(git_dir: Path) -> Path:
    """A linked worktree's objects, refs and config live in the common directory."""
    try:
        base = Path(read_bytes(git_dir / "commondir", max_bytes=4096)[0].decode("utf-8", "replace").strip())
    except OSError:
        return git_dir
    return base if base.is_absolute() else (git_dir / base).resolve()
