"""The answer as it happened: its paragraphs and the tool rows between them, in event order.

Text streams into the last paragraph; a tool row ends it, and text after the row (the next model
step) starts a new paragraph below the row, so the view reads like the panel's transcript.
"""

from __future__ import annotations

import ipywidgets as widgets

from .answer import Answer


class Timeline(widgets.VBox):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_class("nbagent-timeline")
        self._paragraph: Answer | None = None

    def append(self, text: str) -> None:
        """Streamed answer text: into the open paragraph, or a new one after a tool row."""
        if self._paragraph is None:
            if not text.strip("\n"):
                return  # blank lines between steps: the paragraphs are apart already
            self._paragraph = Answer()
            self.children = (*self.children, self._paragraph)
            text = text.lstrip("\n")
        self._paragraph.append(text)

    def add(self, widget: widgets.Widget) -> None:
        """A tool row (or any item that happened between paragraphs): the open paragraph ends here."""
        self._paragraph = None
        self.children = (*self.children, widget)

    @property
    def paragraphs(self) -> list[Answer]:
        return [child for child in self.children if isinstance(child, Answer)]

    @property
    def markdown(self) -> str:
        """The answer's Markdown source so far, paragraphs of different steps a blank line apart."""
        paragraphs = [str(p.markdown) for p in self.paragraphs]
        return paragraphs[0] if len(paragraphs) == 1 else "\n\n".join(p.strip("\n") for p in paragraphs)

    @property
    def value(self) -> str:
        """The answer's HTML so far (every paragraph's)."""
        return "".join(str(p.value) for p in self.paragraphs)
