"""One atomic write for every file nbagent writes: a temporary file beside the target, then os.replace.

A reader sees the old file or the new one, never half of either; a process killed mid-write leaves
at most a temporary file named by nbagent.workspace.tempfiles (``.<name>.<pid>-<random>.nbagent-tmp``), which the
start-up sweep recognises as nbagent's own and removes once its process is gone.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .tempfiles import temp_path


PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def atomic_write(path: Path, data: bytes | str, *, mode: int | None = None, fsync: bool = True,
                 private: bool = False) -> bool:
    """Write ``data`` (text is UTF-8, lone surrogates kept) to ``path`` atomically; True when the file is new.

    An existing file keeps its mode unless ``mode`` is given; a new file gets ``mode`` or, by
    default, 0o666 minus the umask as open() would give it. ``private`` (every file in nbagent's
    state directory) means 0600, and missing folders made 0700. ``fsync`` makes the content durable
    before the rename (off only for files that are cheap to lose, like caches). A link at ``path``
    is replaced, never written through.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    try:
        existing = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        existing = None
    if private:
        mode = PRIVATE_FILE
        _make_private_parents(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    final_mode = mode if mode is not None else existing
    tmp = write_temp(path, data, mode=0o600 if final_mode is not None else 0o666, fsync=fsync)
    try:
        if final_mode is not None:
            os.chmod(tmp, final_mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return existing is None


def write_temp(path: Path, data: bytes, *, mode: int = 0o666, fsync: bool = True) -> Path:
    """A new temporary file beside ``path``, named as nbagent.workspace.tempfiles names them (the start-up
    sweep knows it), holding ``data``; the caller renames or links it into place, or unlinks it. Made
    exclusively (never through a link), with ``mode`` minus the umask; removed again if the write fails."""
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def replace_with(path: Path, tmp: Path) -> None:
    """Rename ``tmp`` (from ``write_temp`` or ``temp_path``) over ``path``; ``tmp`` is removed if that fails."""
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_symlink(path: Path, target: str) -> None:
    """Make ``path`` a symbolic link to ``target`` atomically (a link made beside it, then renamed)."""
    tmp = temp_path(path)
    os.symlink(target, tmp)
    replace_with(path, tmp)


def _make_private_parents(folder: Path) -> None:
    missing = []
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        os.mkdir(made, PRIVATE_DIR)
