"""The workspace's ``.nbagent/`` state directory: made on first use, private, and never a link.

A repository can commit a ``.nbagent`` that is a symbolic link (or a file), and
following it would put nbagent's database in the link's target and prune files
there. So the directory and each of its sub-folders is checked with ``lstat``:
anything that is not a real directory is refused with ``StateDirRefused``, and
nothing is created or deleted through it. New folders are 0700, new files 0600
(the database, task logs and saved outputs can hold secrets).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import StoreError, ToolError

STATE_DIR = ".nbagent"
DIR_MODE = 0o700
FILE_MODE = 0o600


class StateDirRefused(StoreError, ToolError, OSError):
    """The state directory (or a folder in it) is a link, a file, or cannot be made; nothing was written.
    An OSError too, so code that copes with an unwritable disk copes with this the same way."""


def state_dir(root: Path, *parts: str) -> Path:
    """``root/.nbagent[/parts...]``, each level made (0700) if missing and refused if it is not a real directory."""
    path = Path(root) / STATE_DIR
    ensure_private_dir(path, root)
    for part in parts:
        path = path / part
        ensure_private_dir(path, root)
    return path


def ensure_private_dir(path: Path, root: Path, *, parents: bool = False) -> None:
    """Make ``path`` (0700; its parents too if asked) or check that it is a real directory, not a link.
    A state folder's own top level gets the ``.gitignore`` of ``*`` that keeps it out of git."""
    if parents:
        try:
            path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        except OSError as exc:
            raise StateDirRefused(f"cannot create {path.parent} ({exc.strerror or exc})") from exc
    _ensure_dir(path, root)
    if path.name == STATE_DIR or parents:
        ignore = path / ".gitignore"
        if not os.path.lexists(ignore):
            try:
                write_private(ignore, b"*\n")
            except OSError:
                pass  # the directory is usable all the same


def _ensure_dir(path: Path, root: Path) -> None:
    try:
        os.mkdir(path, DIR_MODE)
        return
    except FileExistsError:
        pass
    except OSError as exc:
        raise StateDirRefused(f"cannot create {path} ({exc.strerror or exc}): nbagent keeps its state in "
                              "memory for this workspace") from exc
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a directory"
        raise StateDirRefused(
            f"{path} is {kind}; nbagent only uses a real {STATE_DIR} directory inside the workspace {root} "
            "and wrote nothing there (remove or rename it to let nbagent make its own)"
        )
    if stat.S_IMODE(info.st_mode) & 0o077 and info.st_uid == os.getuid():
        try:  # an older nbagent made it 0755: close it now
            os.chmod(path, DIR_MODE)
        except OSError:
            pass


def write_private(path: Path, data: bytes) -> None:
    """Create ``path`` (0600, never through a link) and write ``data``; an existing file is replaced in place."""
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
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise StateDirRefused(f"{path} is a symbolic link; nbagent does not follow links in {STATE_DIR}/") from None
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != FILE_MODE:
            os.chmod(path, FILE_MODE)  # an older nbagent made it 0644
        return
    os.close(fd)  # a file made just now: no connection of this process can hold a lock on it yet
