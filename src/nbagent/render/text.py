"""Plain-text summaries every front end shares: a call in one line, todo marks and counts.

The widgets (HTML), the terminal (terminal.py) and the slash commands all describe a call, a todo list
or a status with these, so the same call reads the same everywhere. Nothing here imports a front end.
"""

from __future__ import annotations

import json
from typing import Any

from .escape import strip_controls, truncate

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
    return truncate(text, limit, one_line=True)


def _pairs(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_value(v)}" for k, v in arguments.items())


def _value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, default=str)


TODO_MARKS = {"completed": "✔", "in_progress": "▶", "pending": "○", "blocked": "⚠"}
STATUS_MARKS = {"done": "✓", "failed": "✗", "denied": "⊘", "killed": "■", "interrupted": "■"}


UNKNOWN_COST = "unknown"
"""How every front end writes a cost it does not know (a model genai-prices has no price for)."""


def cost_text(value: float | None) -> str:
    """A cost as the CLI and the views write it: "$0.0123", or "unknown" (never "?", "-" or "n/a")."""
    return UNKNOWN_COST if value is None else f"${value:.4f}"


def counts_line_for(todos: list[dict[str, Any]]) -> str:
    """"3 of 5 done, 1 blocked"."""
    done = sum(t.get("status") == "completed" for t in todos)
    blocked = sum(t.get("status") == "blocked" for t in todos)
    return f"{done} of {len(todos)} done" + (f", {blocked} blocked" if blocked else "")


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


OPEN, CLOSE = "<context>", "</context>"
"""The live notes are tagged, so the model tells them from the user's words and a tool's output
(nbagent.engine.request_context puts them after a message; views show the message without them)."""


def without_note(content: str) -> str:
    """What the user typed (or the tool said), without the live note nbagent put after it."""
    cut = content.rfind(f"\n\n{OPEN}\n")
    return content[:cut] if cut >= 0 and content.endswith(CLOSE) else content


def note_line(source: str, change: str, summary: str, changes: int = 0) -> str:
    """The one line a view shows for a delivered context note (the model got the full note)."""
    what = {"updated": f"changed {changes}×", "failing": "is failing", "removed": "was removed",
            "attached": "attached"}.get(change, change)
    return f"context: {source} {what}" + (f": {truncate(strip_controls(summary, ' '), 100, one_line=True)}"
                                          if summary else "")
