"""Memory: the entries injected into this turn's prompt and those remembered (or forgotten) during it."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
from traitlets import List, observe


class Memory(widgets.VBox):
    injected = List()
    remembered = List()
    forgotten = List()

    def __init__(self, **kwargs):
        self.body = widgets.HTML()
        super().__init__(children=(self.body,), layout=widgets.Layout(display="none"), **kwargs)
        self.add_class("nbagent-memory")

    def changed(self, action: str, entries: list[dict[str, Any]]) -> None:
        if action == "injected":
            # A turn is told more than once (the top entries at its start, relevant ones per step):
            # keep each entry once, with the score and reason of the search that found it.
            merged = {_key(e): e for e in self.injected}
            for entry in entries:
                merged[_key(entry)] = {**merged.get(_key(entry), {}), **entry}
            self.injected = list(merged.values())
        elif action == "remember":
            self.remembered = [*self.remembered, *entries]
        elif action == "forget":
            self.forgotten = [*self.forgotten, *entries]

    @observe("injected", "remembered", "forgotten")
    def _render(self, change=None) -> None:
        sections = [(f"memory used this turn ({len(self.injected)})", self.injected),
                    ("remembered", self.remembered), ("forgotten", self.forgotten)]
        body = "".join(_section(title, entries) for title, entries in sections if entries)
        self.body.value = body
        self.layout.display = "" if body else "none"


def _key(entry: dict[str, Any]) -> Any:
    return (entry.get("source", "workspace"), entry["id"]) if entry.get("id") is not None else entry.get("text")


def _section(title: str, entries: list[dict[str, Any]]) -> str:
    items = "".join(f"<li>[{html.escape(str(e.get('kind') or e.get('category') or ''))}] "
                    f"{html.escape(str(e.get('text', '')))}{_score(e)}</li>" for e in entries)
    opened = "" if title.startswith("memory used") else " open"
    return (f'<details{opened} style="font-size:12px"><summary>{html.escape(title)}</summary>'
            f'<ul style="margin:0">{items}</ul></details>')


def _score(entry: dict[str, Any]) -> str:
    """" (0.62: cosine 0.52 (raw 0.87) + keywords 0.40)" for an entry found by search, else nothing."""
    if not isinstance(entry.get("score"), (int, float)):
        return ""
    why = f": {entry['why']}" if entry.get("why") else ""
    return f' <span style="opacity:0.7">({entry["score"]:.2f}{html.escape(str(why))})</span>'
