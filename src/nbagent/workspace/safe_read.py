"""The one safe read of workspace and state content: a regular file, no link, never a blocking open.

The workspace and its state directory are hostile: a repository can ship a FIFO where a file is
expected (opening it would block the reader forever), a link where nbagent's own file is, or a
file of gigabytes. So every read of their content opens with ``O_NONBLOCK | O_NOFOLLOW``, checks
the *open* file with ``fstat`` (a file swapped after an earlier check is still caught), and reads
at most a capped number of bytes: the whole file up to the cap, or only its tail.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, Literal

from ..errors import ToolError

MAX_WHOLE_READ = 256 << 20
"""Files read whole (to edit them, notebooks, nbagent's own state) above this size are refused."""


class UnreadableFile(ToolError, OSError):
    """Not a regular file (a pipe, socket, device, directory or link) or too large; nothing was read.
    An OSError too, so code that copes with a missing file copes with this the same way."""


class NotRegularFile(UnreadableFile):
    pass


class TooLarge(UnreadableFile):
    pass


def read_bytes(path: str | os.PathLike[str], *, shown: str | None = None, max_bytes: int = MAX_WHOLE_READ,
               part: Literal["whole", "head", "tail"] = "whole") -> tuple[bytes, os.stat_result]:
    """(content, stat of the open file) of the regular file ``path``.

    Above ``max_bytes`` the read is refused (``TooLarge``), or with ``part`` "head" or "tail" only
    the first or last ``max_bytes`` are read. A missing file raises FileNotFoundError; a link, FIFO,
    socket, device or directory raises ``NotRegularFile`` without blocking.
    """
    with open_regular(path, shown=shown) as f:
        info = os.fstat(f.fileno())
        shown = shown if shown is not None else os.fspath(path)
        if info.st_size > max_bytes:
            if part == "whole":
                raise TooLarge(f"{shown} is {size_text(info.st_size)}, more than the {size_text(max_bytes)} "
                               "a tool reads whole; read_file pages through it")
            if part == "tail":
                f.seek(info.st_size - max_bytes)
        return f.read(max_bytes), info  # a file that grew since the fstat is still read up to the cap


def open_regular(path: str | os.PathLike[str], *, shown: str | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, for a caller that streams it (a log's tail): the same
    checks as ``read_bytes`` (no link followed, no blocking open, a regular file once open)."""
    shown = shown if shown is not None else os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link
            raise NotRegularFile(f"{shown} is a symbolic link: nbagent does not follow it here") from None
        if isinstance(exc, IsADirectoryError):
            raise NotRegularFile(f"{shown} is a directory, not a file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(f"{shown} is not a regular file (a pipe, socket or device)")
    return os.fdopen(fd, "rb")


def read_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_WHOLE_READ, errors: str = "replace") -> str:
    """``read_bytes`` decoded as UTF-8 (bad bytes replaced unless ``errors`` says otherwise)."""
    return read_bytes(path, max_bytes=max_bytes)[0].decode("utf-8", errors)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """``path`` itself (not what a link names) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def size_text(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"

