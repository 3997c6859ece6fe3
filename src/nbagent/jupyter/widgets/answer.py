"""An answer paragraph: one text item of a turn rendered as Markdown.

Raw HTML from the model is escaped and remote images stay behind a click (safe_markdown)."""

from __future__ import annotations

import ipywidgets as widgets
from traitlets import Unicode, observe

from ...render.markdown import markdown_to_html


class Answer(widgets.HTML):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_class("nbagent-answer")

    markdown = Unicode("")
    """The paragraph's Markdown source so far; ``value`` holds its HTML."""

    @observe("markdown")
    def _render(self, change=None) -> None:
        self.value = markdown_to_html(self.markdown)
        self.layout.display = "" if self.markdown else "none"
