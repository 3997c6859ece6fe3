"""Todos: a progress bar with counts (done of total, blocked) and the list with state marks."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
from traitlets import List, observe

from ...render.escape import escape_html
from .format import TODO_MARKS as MARKS
from .format import counts_line_for as counts_line



class Todos(widgets.VBox):
    todos = List()

    def __init__(self, **kwargs):
        self.progress = widgets.IntProgress(value=0, min=0, max=1, bar_style="success",
                                            layout=widgets.Layout(width="16em"))
        self.counts = widgets.Label()
        self.items = widgets.HTML()
        super().__init__(children=(widgets.HBox((self.progress, self.counts)), self.items),
                         layout=widgets.Layout(display="none"), **kwargs)
        self.add_class("nbagent-todos")

    @property
    def done(self) -> int:
        return sum(t.get("status") == "completed" for t in self.todos)

    @property
    def blocked(self) -> int:
        return sum(t.get("status") == "blocked" for t in self.todos)

    @observe("todos")
    def _render(self, change=None) -> None:
        total = len(self.todos)
        self.layout.display = "" if total else "none"
        self.progress.max = max(total, 1)
        self.progress.value = self.done
        self.counts.value = counts_line(self.todos)
        self.items.value = "".join(_item(t) for t in self.todos)


def _item(todo: dict[str, Any]) -> str:
    status = todo.get("status", "pending")
    text = escape_html(todo.get("content", ""))
    if status == "completed":
        text = f"<s>{text}</s>"
    elif status == "in_progress":
        text = f"<b>{text}</b>"
    note = f' <i>({escape_html(todo["note"])})</i>' if todo.get("note") else ""
    return f'<div style="font-size:12px">{MARKS.get(status, "?")} {text}{note}</div>'
