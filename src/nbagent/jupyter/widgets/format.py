"""Small text formatters the widgets and the text view share: argument summaries, diffs, counts."""

from __future__ import annotations

import html
import json
from typing import Any

# The argument that says most about a call, per tool; other tools show their first arguments.
_KEY_ARGUMENT = {
    "bash": "command", "read_file": "path", "write_file": "path", "edit_file": "path", "multi_edit": "path",
    "list_dir": "path", "glob": "pattern", "grep": "pattern", "notebook_read": "path",
    "notebook_edit": "path", "kernel_run": "code", "remember": "text", "recall": "query",
}


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
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def looks_like_diff(text: str) -> bool:
    lines = text.lstrip().splitlines()[:6]
    return any(line.startswith("@@") for line in lines) or (
        len(lines) >= 2 and lines[0].startswith("--- ") and lines[1].startswith("+++ "))


_DIFF_COLOURS = {"+": "#1a7f37", "-": "#cf222e", "@": "#8250df"}


def diff_html(diff: str) -> str:
    """A unified diff as coloured HTML lines (additions green, removals red, hunks purple)."""
    out = []
    for line in diff.splitlines():
        colour = None if line.startswith(("+++", "---")) else _DIFF_COLOURS.get(line[:1])
        text = html.escape(line) or " "
        out.append(f'<span style="color:{colour}">{text}</span>' if colour else text)
    return _pre("\n".join(out))


def output_html(text: str) -> str:
    """A tool's output: coloured when it is a diff, else preformatted text."""
    return diff_html(text) if looks_like_diff(text) else _pre(html.escape(text))


def _pre(body: str) -> str:
    return ('<pre style="margin:0;max-height:24em;overflow:auto;white-space:pre-wrap;font-size:12px">'
            f"{body}</pre>")


def tokens(n: int) -> str:
    """1234 -> "1.2k": headers stay short."""
    return str(n) if n < 1000 else f"{n / 1000:.1f}k"


def cost(value: float | None) -> str:
    if value is None:
        return "cost n/a"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


TODO_MARKS = {"completed": "✔", "in_progress": "▶", "pending": "○", "blocked": "⚠"}


def counts_line_for(todos: list[dict[str, Any]]) -> str:
    """"3 of 5 done, 1 blocked"."""
    done = sum(t.get("status") == "completed" for t in todos)
    blocked = sum(t.get("status") == "blocked" for t in todos)
    return f"{done} of {len(todos)} done" + (f", {blocked} blocked" if blocked else "")
