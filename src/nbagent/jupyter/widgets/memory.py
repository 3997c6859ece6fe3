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
            self.injected = list(entries)
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


def _section(title: str, entries: list[dict[str, Any]]) -> str:
    items = "".join(f"<li>[{html.escape(str(e.get('kind', '')))}] {html.escape(str(e.get('text', '')))}</li>"
                    for e in entries)
    opened = "" if title.startswith("memory used") else " open"
    return (f'<details{opened} style="font-size:12px"><summary>{html.escape(title)}</summary>'
            f'<ul style="margin:0">{items}</ul></details>')
