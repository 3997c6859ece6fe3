"""HTML formatters of the widgets: diffs, outputs, token counts and costs.

Escaping is render/escape.py's, the plain-text summaries are render/text.py's."""

from __future__ import annotations

from ...render.escape import escape_html
from ...render.text import TODO_MARKS, UNKNOWN_COST, counts_line_for, summarize_arguments

__all__ = ["TODO_MARKS", "cost", "counts_line_for", "diff_html", "looks_like_diff", "output_html",
           "summarize_arguments", "tokens"]


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
        text = escape_html(line) or " "
        out.append(f'<span style="color:{colour}">{text}</span>' if colour else text)
    return _pre("\n".join(out))


def output_html(text: str) -> str:
    """A tool's output: coloured when it is a diff, else preformatted text."""
    return diff_html(text) if looks_like_diff(text) else _pre(escape_html(text))


def _pre(body: str) -> str:
    return ('<pre style="margin:0;max-height:24em;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;'
            f'font-size:12px">{body}</pre>')


def tokens(n: int) -> str:
    """1234 -> "1.2k": headers stay short."""
    return str(n) if n < 1000 else f"{n / 1000:.1f}k"


def cost(value: float | None) -> str:
    if value is None:
        return f"cost {UNKNOWN_COST}"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"
