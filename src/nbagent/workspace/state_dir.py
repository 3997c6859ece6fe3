"""The one owner of nbagent's state directory: where it is, whether it may be used, every path in it.

By default the state of a workspace is ``<workspace>/.nbagent``; ``NBAGENT_STATE_DIR`` moves all of
it (database, journal, checkpoints, traces, repo-map cache, outputs, task logs, locks, MCP config,
rules) to one private folder per workspace under the configured directory. No other module
spells the folder's name: they ask here for the path they need (``state_dir``, ``state_file``,
``find_state_file``) and name what is inside with the constants below.

A repository can commit a ``.nbagent`` that is a symbolic link (or a file), or links below a real
one, and another user on a shared machine can create the configured folder or the database first
(0777, 0666). Following either would put nbagent's writes in someone else's hands. So every level
from the top of the state directory down to the file used is checked with ``lstat``: a level that
is a link, not a directory, or owned by another user is refused with ``StateDirRefused`` (one
message naming it) and nothing is created, written or deleted through it. What is ours but too
open (an older nbagent's 0755, a cloned 0644) is closed: folders 0700, files 0600.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from ..errors import StoreError, ToolError

STATE_DIR = ".nbagent"
STATE_DIR_ENV = "NBAGENT_STATE_DIR"
DIR_MODE = 0o700
FILE_MODE = 0o600

# What the state directory holds (one name each; callers never spell a path of their own).
DATABASE = "nbagent.db"
JOURNAL = "journal"
CHECKPOINTS = "checkpoints"
TRACES = "traces.jsonl"
COMPLETIONS = "completions.jsonl"
REPOMAP = "repomap.json"
OUTPUTS = "outputs"
TASKS = "tasks"
BATCH = "batch"
POLLER_LOCK = "context-poller.lock"
MCP_CONFIG = "mcp.json"
MCP_LOGS = "mcp"
RULES = "rules"


class StateDirRefused(StoreError, ToolError, OSError):
    """The state directory (or something in it) is a link, a file, someone else's, or cannot be made;
    nothing was written. An OSError too, so code that copes with an unwritable disk copes with this
    the same way."""


def location(root: str | os.PathLike[str]) -> Path:
    """Where the state of the workspace ``root`` lives (nothing is made or checked): ``root/.nbagent``,
    or under ``$NBAGENT_STATE_DIR`` one folder per workspace (its name and a hash of its path)."""
    root = _real(root)
    configured = os.environ.get(STATE_DIR_ENV, "").strip()
    if not configured:
        return root / STATE_DIR
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return Path(configured).expanduser().resolve() / f"{root.name or 'root'}-{digest}"


def state_dir(root: str | os.PathLike[str], *parts: str) -> Path:
    """The state directory (``parts``: a folder in it), each level made (0700) if missing and checked."""
    top = location(root)
    if top.parent != _real(root):
        _check_configured_parent(top.parent)
    path = top
    _ensure_dir(path, top)
    _ignore_in_git(path)
    for part in parts:
        path = path / part
        _ensure_dir(path, top)
    return path


def usable_state_dir(root: str | os.PathLike[str], *parts: str) -> Path | None:
    """``state_dir``, or None when it cannot be used (a read-only workspace, a link, someone else's):
    the caller then keeps things in memory."""
    try:
        return state_dir(root, *parts)
    except StateDirRefused:
        return None


def state_file(root: str | os.PathLike[str], *parts: str) -> Path:
    """``parts[-1]`` in the folder ``parts[:-1]`` (made and checked); an existing file there must be a
    regular file of ours (made private if it is not), never a link."""
    folder = state_dir(root, *parts[:-1])
    path = folder / parts[-1]
    check_private_file(path)
    return path


def find_state_file(root: str | os.PathLike[str], *parts: str) -> Path | None:
    """``parts`` in the state directory for reading, or None when it (or a folder above it) does not
    exist; nothing is made. A level that is a link or someone else's is refused."""
    top = location(root)
    path = top
    for part in ("", *parts[:-1]):
        path = path / part if part else path
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateDirRefused(f"cannot read {path} ({exc.strerror or exc})") from exc
        _refuse_foreign_dir(path, info, top)
    found = path / parts[-1]
    return found if os.path.lexists(found) else None


def is_state_path(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """``path`` (a resolved path) is inside the state directory of the workspace ``root``."""
    real = Path(path)
    return real.is_relative_to(_real(root) / STATE_DIR) or real.is_relative_to(location(root))


def check_private_file(path: Path) -> None:
    """Refuse ``path`` if it is a link, not a regular file, or someone else's; close it to 0600 if it
    is ours and more open. A missing file is fine (it will be made 0600)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise StateDirRefused(f"{path} is a symbolic link; nbagent does not follow links in its state "
                              "directory and wrote nothing through it (remove it)")
    if not stat.S_ISREG(info.st_mode):
        raise StateDirRefused(f"{path} is not a regular file; nbagent wrote nothing there (remove it)")
    if info.st_uid != os.getuid():
        raise StateDirRefused(_foreign(path, info))
    if stat.S_IMODE(info.st_mode) != FILE_MODE:
        os.chmod(path, FILE_MODE)  # an older nbagent (or a clone) made it 0644


def private_dir(top: Path, *parts: str) -> Path:
    """``top/parts...`` below a state directory handed out earlier: every level (``top`` included)
    checked again and made (0700) if missing, so a link planted since is refused, not followed."""
    path = Path(top)
    _ensure_dir(path, path)
    for part in parts:
        path = path / part
        _ensure_dir(path, Path(top))
    return path


def real_dirs(folder: Path) -> list[Path]:
    """The sub-folders of ``folder`` that are real folders of ours (links and others' skipped)."""
    found = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.getuid():
            found.append(Path(entry.path))
    return found


def refuse_links_below(path: Path, top: Path) -> None:
    """Check every level from ``top`` (the state directory) down to ``path``'s folder: real folders
    of ours only (used before a path handed out earlier is written again)."""
    rel = Path(path).parent.relative_to(top)
    level = top
    for part in ("", *rel.parts):
        level = level / part if part else level
        try:
            info = os.lstat(level)
        except FileNotFoundError:
            return
        _refuse_foreign_dir(level, info, top)


def ensure_private_dir(path: Path, top: Path) -> None:
    """Make ``path`` (0700) or check that it is a real directory of ours; its parent must exist."""
    _ensure_dir(path, top)


def write_private(path: Path, data: bytes) -> None:
    """Create ``path`` (0600, never through a link) and write ``data``; an existing file is replaced in place."""
    check_private_file(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def create_private(path: Path) -> None:
    """Create an empty private file, or make an existing one private; a link in its place is refused.

    An existing file is never opened. Closing any descriptor of a file drops every POSIX lock this
    process holds on it, SQLite's included: after another agent of the process "touched" the open
    database, a second process closing its last connection took the database for unused and
    deleted its WAL under this one ("disk I/O error" in a batch on two Dask workers).
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:  # a link in its place is "existing" too (O_EXCL never follows one)
        check_private_file(path)
        return
    os.close(fd)  # a file made just now: no connection of this process can hold a lock on it yet


def _real(root: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(Path(root).expanduser()))


def open_private(path: Path, flags: int) -> int:
    """A descriptor of the state file ``path`` opened with ``flags`` (plus create, 0600): never through a
    link, never a FIFO (the open does not block, and the open file is checked to be a regular one)."""
    check_private_file(path)
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, FILE_MODE)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in after the check
        os.close(fd)
        raise StateDirRefused(f"{path} is not a regular file; nbagent does not use it")
    return fd


def open_append(path: Path) -> int:
    """``open_private`` for appending lines (the journal, the traces)."""
    return open_private(path, os.O_RDWR | os.O_APPEND)


def open_lock_file(path: Path):
    """A lock file in the state directory for ``flock``: a binary file object the caller closes."""
    return os.fdopen(open_private(path, os.O_RDWR), "r+b")


def _ensure_dir(path: Path, top: Path) -> None:
    try:
        os.mkdir(path, DIR_MODE)
        return
    except FileExistsError:
        pass
    except OSError as exc:
        raise StateDirRefused(f"cannot create {path} ({exc.strerror or exc}): nbagent keeps its state in "
                              "memory for this workspace") from exc
    info = os.lstat(path)
    _refuse_foreign_dir(path, info, top)
    if stat.S_IMODE(info.st_mode) != DIR_MODE:
        try:  # an older nbagent made it 0755 (or a clone brought it): close it now
            os.chmod(path, DIR_MODE)
        except OSError:
            pass


def _refuse_foreign_dir(path: Path, info: os.stat_result, top: Path) -> None:
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a directory"
        where = "" if path == top else f" (in {top})"
        raise StateDirRefused(
            f"{path}{where} is {kind}; nbagent only uses real folders in its state directory and wrote "
            "nothing there (remove or rename it to let nbagent make its own)"
        )
    if info.st_uid != os.getuid():
        raise StateDirRefused(_foreign(path, info))


def _foreign(path: Path, info: os.stat_result) -> str:
    return (f"{path} belongs to another user (uid {info.st_uid}); nbagent uses only state it owns and "
            f"wrote nothing there (point {STATE_DIR_ENV} at a folder of your own, or remove it)")


def _check_configured_parent(folder: Path) -> None:
    """The folder ``NBAGENT_STATE_DIR`` names: made if missing (0700); one that others can write
    without the sticky bit (who may rename our folder in it) and that is not ours is refused."""
    try:
        folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        info = os.stat(folder)
    except OSError as exc:
        raise StateDirRefused(f"cannot create {folder} ({exc.strerror or exc})") from exc
    open_to_others = info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX
    if info.st_uid not in (os.getuid(), 0) or (open_to_others and info.st_uid != os.getuid()):
        raise StateDirRefused(f"{folder} ({STATE_DIR_ENV}) belongs to another user (uid {info.st_uid}) "
                              f"or is writable by others; nbagent wrote nothing there (point {STATE_DIR_ENV} "
                              "at a folder of your own)")


def _ignore_in_git(top: Path) -> None:
    """The state directory's ``.gitignore`` of ``*``: it never reaches git."""
    ignore = top / ".gitignore"
    if not os.path.lexists(ignore):
        try:
            write_private(ignore, b"*\n")
        except OSError:
            pass  # the directory is usable all the same
