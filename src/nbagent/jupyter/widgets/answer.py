"""The answer: the streamed text rendered as Markdown (raw HTML in it is escaped, not run)."""

from __future__ import annotations

import ipywidgets as widgets
import mistune
from traitlets import Unicode, observe

_render = mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])


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
        self.value = _render(self.markdown) if self.markdown else ""
