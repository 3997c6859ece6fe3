"""The answer: the streamed text rendered as Markdown (raw HTML escaped, remote images behind a click)."""

from __future__ import annotations

import ipywidgets as widgets
from traitlets import Unicode, observe

from ...safe_markdown import markdown_to_html


class Answer(widgets.HTML):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_class("nbagent-answer")

    markdown = Unicode("")
    """The answer's Markdown source so far; ``value`` holds its HTML."""

    def append(self, text: str) -> None:
        self.markdown += text

    @observe("markdown")
    def _render(self, change=None) -> None:
        self.value = markdown_to_html(self.markdown)
