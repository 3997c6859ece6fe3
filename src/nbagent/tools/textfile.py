"""Reading a window of a text file, writing one atomically, and diffing two versions.

Text is UTF-8. Undecodable bytes survive an edit untouched (surrogateescape on
the way in and out), and what the model sees is always valid text.
"""

from __future__ import annotations

import difflib
import mimetypes
from pathlib import Path

from ..errors import ToolError
from ..workspace.safe_read import MAX_WHOLE_READ, open_regular, read_bytes, size_text as _size

MAX_LINE_CHARS = 2000
"""A longer line is shown cut, with the count of what was left out."""
_SNIFF_BYTES = 8192


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first 8 KiB marks a binary file (git and ripgrep use the same test)."""
    return b"\0" in head


def binary_message(shown: str, path: Path) -> str:
    kind = mimetypes.guess_type(path.name)[0] or "unknown type"
    return f"{shown} is a binary file ({_size(path.stat().st_size)}, {kind}): read_file shows text only"


def read_window(path: Path, shown: str, offset: int, limit: int, char_budget: int) -> str:
    """Lines ``offset``.. (1-based) numbered like ``cat -n``, at most ``limit`` lines and ``char_budget``
    characters, with a closing note whenever part of the file is not shown."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory: use list_dir (or glob) to see what is in it")
    _regular(path, shown)
    with open_regular(path, shown=shown) as f:
        if is_binary(f.read(_SNIFF_BYTES)):
            raise ToolError(binary_message(shown, path))
        f.seek(0)
        out, last, undecodable = _collect(f, offset, limit, char_budget)
    total = count_lines(path)
    if total == 0:
        return f"({shown} is empty)"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {shown}: it has {total} lines")
    note = _window_note(offset, last, total)
    if undecodable:
        note = (note + "\n" if note else "") + "[some bytes are not UTF-8 and are shown as \ufffd]"
    return "".join(out).rstrip("\n") + ("\n" + note if note else "")


def text_window(text: str, shown: str, offset: int, limit: int, char_budget: int) -> str:
    """``read_window`` over text held in memory (an editor's unsaved buffer) rather than a file."""
    import io

    data = text.encode("utf-8", "surrogateescape")
    out, last, _ = _collect(io.BytesIO(data), offset, limit, char_budget)
    total = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if total == 0:
        return f"({shown} is empty)"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {shown}: it has {total} lines")
    note = _window_note(offset, last, total)
    return "".join(out).rstrip("\n") + ("\n" + note if note else "")


def _collect(f, offset: int, limit: int, char_budget: int) -> tuple[list[str], int, bool]:
    out: list[str] = []
    used, last, undecodable = 0, offset - 1, False
    for number, (raw, full_len) in enumerate(_bounded_lines(f), 1):
        if number < offset:
            continue
        if len(out) >= limit:
            break
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line, undecodable = raw.decode("utf-8", "replace"), True
        line = line.rstrip("\r\n")
        if full_len > len(raw) or len(line) > MAX_LINE_CHARS:
            more = full_len - len(raw) + max(len(line) - MAX_LINE_CHARS, 0)
            line = f"{line[:MAX_LINE_CHARS]}... [line cut: {more:,} more bytes; use grep or bash to see it]"
        entry = f"{number:>6}\t{line}\n"
        if out and used + len(entry) > char_budget:
            break
        out.append(entry)
        used += len(entry)
        last = number
    return out, last, undecodable


def _bounded_lines(f):
    """Yield (line bytes, up to a cap; the line's full length), never holding a huge line in memory."""
    cap = MAX_LINE_CHARS * 4 + 4  # UTF-8 needs at most four bytes a character
    while True:
        chunk = f.readline(cap)
        if not chunk:
            return
        full = len(chunk)
        if not chunk.endswith(b"\n") and full == cap:
            while (more := f.readline(1 << 20)):
                full += len(more)
                if more.endswith(b"\n"):
                    break
        yield chunk, full


def _regular(path: Path, shown: str) -> None:
    """Refuse FIFOs, sockets and devices: opening a FIFO would block the tool forever."""
    if path.exists() and not path.is_file():
        raise ToolError(f"{shown} is not a regular file (a pipe, socket or device)")


def read_regular_bytes(path: Path, shown: str, max_bytes: int = MAX_WHOLE_READ) -> tuple[bytes, int]:
    """(content, mtime_ns) of a regular file, through the one safe read (nbagent.workspace.safe_read):
    a FIFO, a link or a file swapped in after a check is refused instead of hanging the reader.
    A missing file raises FileNotFoundError."""
    data, info = read_bytes(path, shown=shown, max_bytes=max_bytes)
    return data, info.st_mtime_ns


def _window_note(offset: int, last: int, total: int) -> str:
    if offset <= 1 and last >= total:
        return ""
    if last >= total:
        return f"[lines {offset}-{last} of {total}: the end of the file]"
    return f"[lines {offset}-{last} of {total} shown; read on with offset={last + 1}]"


def count_lines(path: Path) -> int:
    """Lines as an editor counts them: a last line without a newline still counts."""
    count, last = 0, b""
    with open_regular(path) as f:
        while chunk := f.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk
    return count + (1 if last and not last.endswith(b"\n") else 0)


def read_text(path: Path, shown: str) -> str:
    """The whole file as text for editing; line endings are kept as they are."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file")
    _regular(path, shown)
    try:
        data = read_regular_bytes(path, shown)[0]
    except OSError as exc:
        raise ToolError(f"{shown} cannot be read: {exc.strerror or exc}") from None
    if is_binary(data[:_SNIFF_BYTES]):
        raise ToolError(binary_message(shown, path))
    return data.decode("utf-8", "surrogateescape")


def unified_diff(shown: str, before: str | None, after: str) -> str:
    """A git-style unified diff (``before=None`` for a new file), safe to send as text."""
    a, b = _lines(before or ""), _lines(after)
    old_name = "/dev/null" if before is None else f"a/{shown}"
    out = []
    for line in difflib.unified_diff(a, b, old_name, f"b/{shown}", n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return printable("".join(out))


def _lines(text: str) -> list[str]:
    """Split on "\\n" only (str.splitlines would also split on \\r, \\f and others)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def printable(text: str) -> str:
    """Undecodable bytes (kept as surrogates) become \\x escapes, so the text encodes as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
