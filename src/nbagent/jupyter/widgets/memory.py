"""Memory: the entries injected into a turn's prompt, with the score and reason of the search that found them.

They are the turn's ``memory`` in the state; remembering and forgetting show as notices in the timeline."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
from traitlets import List, observe

from ...render.escape import escape_html


class Memory(widgets.VBox):
    injected = List()

    def __init__(self, **kwargs):
        self.body = widgets.HTML()
        super().__init__(children=(self.body,), layout=widgets.Layout(display="none"), **kwargs)
        self.add_class("nbagent-memory")

    @observe("injected")
    def _render(self, change=None) -> None:
        body = _section(f"memory used this turn ({len(self.injected)})", self.injected) if self.injected else ""
        self.body.value = body
        self.layout.display = "" if body else "none"


def _section(title: str, entries: list[dict[str, Any]]) -> str:
    items = "".join(f"<li>[{escape_html(str(e.get('kind') or e.get('category') or ''))}] "
                    f"{escape_html(str(e.get('text', '')))}{_score(e)}</li>" for e in entries)
    return (f'<details style="font-size:12px"><summary>{escape_html(title)}</summary>'
            f'<ul style="margin:0">{items}</ul></details>')


def _score(entry: dict[str, Any]) -> str:
    """" (0.62: cosine 0.52 (raw 0.87) + keywords 0.40)" for an entry found by search, else nothing."""
    if not isinstance(entry.get("score"), (int, float)):
        return ""
    why = f": {entry['why']}" if entry.get("why") else ""
    return f' <span style="opacity:0.7">({entry["score"]:.2f}{escape_html(str(why))})</span>'
