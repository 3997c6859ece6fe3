"""String-replacement edits applied in memory, with errors that tell the model how to fix them."""

from __future__ import annotations

import re
from typing import Any, Iterable

from typing_extensions import NotRequired, TypedDict

from ..errors import ToolError


class Edit(TypedDict):
    """One replacement: old_string must match exactly once unless replace_all is true."""

    old_string: str
    new_string: str
    replace_all: NotRequired[bool]


def apply_edits(text: str, edits: Iterable[Edit | dict[str, Any]]) -> tuple[str, int]:
    """Apply ``edits`` in order, each to the result of the last; (new text, replacements made).

    Raises ToolError naming the failing edit; the caller has written nothing yet.
    """
    edits = list(edits)
    total = 0
    for i, edit in enumerate(edits, 1):
        label = f"edit {i} of {len(edits)}: " if len(edits) > 1 else ""
        try:
            text, n = apply_edit(
                text, edit["old_string"], edit["new_string"], bool(edit.get("replace_all", False))
            )
        except ToolError as exc:
            raise ToolError(f"{label}{exc}") from None
        total += n
    return text, total


def apply_edit(text: str, old: str, new: str, replace_all: bool = False) -> tuple[str, int]:
    if old == "":
        raise ToolError("old_string is empty: quote the text to replace (write_file creates or overwrites a file)")
    if old == new:
        raise ToolError("old_string and new_string are the same: there is nothing to change")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        # The file has Windows line endings and the model quoted it with "\n".
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        raise ToolError(_no_match(text, old))
    if count > 1 and not replace_all:
        lines = ", ".join(str(n) for n in _match_lines(text, old)[:10])
        raise ToolError(
            f"old_string occurs {count} times (at lines {lines}): include more of the surrounding "
            "text so it matches once, or pass replace_all=true to replace every one"
        )
    return (text.replace(old, new) if replace_all else text.replace(old, new, 1)), (count if replace_all else 1)


def _match_lines(text: str, old: str) -> list[int]:
    lines, at = [], text.find(old)
    while at >= 0:
        lines.append(text.count("\n", 0, at) + 1)
        at = text.find(old, at + len(old))
    return lines


def _no_match(text: str, old: str) -> str:
    message = "old_string was not found"
    loose = _whitespace_insensitive(old)
    found = loose.search(text) if loose else None
    if found:
        line = text.count("\n", 0, found.start()) + 1
        return (
            f"{message}; text that differs only in whitespace starts at line {line}: "
            "read the file again and copy its indentation and spacing exactly"
        )
    first = next((ln.strip() for ln in old.splitlines() if ln.strip()), "")
    at = text.find(first) if first else -1
    if at >= 0 and first != old.strip():
        line = text.count("\n", 0, at) + 1
        return f"{message}; its first line appears at line {line} but what follows differs: read the file again"
    return f"{message}: read the file again (read_file) and quote the text exactly as it is"


def _whitespace_insensitive(old: str) -> re.Pattern[str] | None:
    words = old.split()
    if not words or len(words) > 2000:
        return None
    return re.compile(r"\s+".join(re.escape(w) for w in words))
