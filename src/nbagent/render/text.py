"""Plain-text summaries every front end shares: a call in one line, todo marks and counts, escaping.

The widgets (HTML), the terminal (terminal.py) and the slash commands all describe a call, a todo list
or a status with these, so the same call reads the same everywhere. Nothing here imports a front end.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The argument that says most about a call, per tool; other tools show their first arguments.
_KEY_ARGUMENT = {
    "bash": "command", "read_file": "path", "write_file": "path", "edit_file": "path", "multi_edit": "path",
    "list_dir": "path", "glob": "pattern", "grep": "pattern", "notebook_read": "path",
    "notebook_edit": "path", "kernel_run": "code", "remember": "text", "recall": "query",
}


def key_argument(name: str) -> str | None:
    """The argument that says most about a call of tool ``name`` (None when it has no such one)."""
    return _KEY_ARGUMENT.get(name)


def summarize_arguments(name: str, arguments: dict[str, Any], limit: int = 80) -> str:
    """One line that tells what a call does: ``bash: ls -la`` rather than a JSON dump."""
    key = _KEY_ARGUMENT.get(name)
    if key and key in arguments:
        rest = {k: v for k, v in arguments.items() if k != key}
        text = str(arguments[key]) + (f"  ({_pairs(rest)})" if rest else "")
    else:
        text = _pairs(arguments)
    return shorten(text, limit)


def _pairs(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_value(v)}" for k, v in arguments.items())


def _value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut with "…" past ``limit`` characters (for summaries, never for approvals)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


TODO_MARKS = {"completed": "✔", "in_progress": "▶", "pending": "○", "blocked": "⚠"}
STATUS_MARKS = {"done": "✓", "failed": "✗", "denied": "⊘", "killed": "■", "interrupted": "■"}


def counts_line_for(todos: list[dict[str, Any]]) -> str:
    """"3 of 5 done, 1 blocked"."""
    done = sum(t.get("status") == "completed" for t in todos)
    blocked = sum(t.get("status") == "blocked" for t in todos)
    return f"{done} of {len(todos)} done" + (f", {blocked} blocked" if blocked else "")


# C0 and C1 control characters and DEL (newline and tab are kept where a caller keeps lines), and the
# invisible characters that reorder or hide text (bidi overrides and isolates, zero-width marks): a
# terminal would obey them, so text that nbagent did not write shows them as escapes instead.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def escape_controls(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control or invisible formatting character shown as ``\\xNN`` / ``\\uNNNN``.

    Newlines and tabs stay as they are when ``keep_newlines`` (multi-line commands and diffs keep
    their lines); otherwise they are escaped too, so the result is one line.
    """
    escaped = _CONTROLS.sub(_escape_one, text)
    if not keep_newlines:
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t")
    return escaped


def _escape_one(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def kernel_line(added: list[str], rebound: list[str], deleted: list[str], mutated: list[str],
                unchecked: list[str], limit: int = 12) -> str:
    """What a call did to the kernel in one line: ``kernel: + df_clean, ~ df (changed in place), - tmp``.

    ``+`` added, ``=`` bound to another object, ``~`` changed in place, ``-`` deleted; the names that
    could not be checked are counted, not listed. The panel (TypeScript) writes the same line.
    """
    parts = ([f"+ {n}" for n in added] + [f"= {n}" for n in rebound]
             + [f"~ {n} (changed in place)" for n in mutated] + [f"- {n}" for n in deleted])
    shown = ", ".join(parts[:limit]) + (f", … {len(parts) - limit} more" if len(parts) > limit else "")
    checked = f"{len(unchecked)} not checked" if unchecked else ""
    if not shown:
        return f"kernel: no change seen ({checked})" if checked else "kernel: no change"
    return f"kernel: {shown}" + (f" ({checked})" if checked else "")
