"""A notice line in a turn: an error, a compaction, a memory change, an attached source's note."""

from __future__ import annotations


import ipywidgets as widgets

from ...render.agent_state import NoticeItem
from ...render.escape import escape_html

COLOURS = {"error": "#cf222e", "info": "#666", "memory": "#666", "context": "#666"}


class Notice(widgets.HTML):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_class("nbagent-notice")

    def show(self, item: NoticeItem) -> None:
        text = f"error: {item.text}" if item.level == "error" else item.text
        self.value = notice_html(text, COLOURS.get(item.level, "#666"))


def notice_html(text: str, colour: str = "#666") -> str:
    return f'<div style="font-size:12px;color:{colour}">{escape_html(text)}</div>'
