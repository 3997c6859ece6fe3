"""Reasoning: streamed into a collapsed panel; at the turn's end only "thought for N s" remains."""

from __future__ import annotations

import html

import ipywidgets as widgets
from traitlets import Bool, Float, Unicode, observe


class Reasoning(widgets.VBox):
    text = Unicode("")
    seconds = Float(0.0)
    """Time spent thinking: from each burst's first reasoning delta to the event that ended it."""
    dropped = Bool(False)
    """True once the turn ended and the panel gave way to its one-line summary."""

    def __init__(self, **kwargs):
        self.toggle = widgets.ToggleButton(value=False, description="thinking…", icon="caret-right",
                                           layout=widgets.Layout(width="auto", align_self="flex-start"))
        self.body = widgets.HTML(layout=widgets.Layout(display="none"))
        self.summary = widgets.Label()
        super().__init__(children=(self.toggle,), layout=widgets.Layout(display="none"), **kwargs)
        self.add_class("nbagent-reasoning")
        self.toggle.observe(self._on_toggle, "value")
        self._burst_start: float | None = None

    @property
    def expanded(self) -> bool:
        return self.toggle.value

    def add(self, text: str, at: float) -> None:
        if self._burst_start is None:
            self._burst_start = at
        self.text += text
        self.layout.display = ""

    def pause(self, at: float) -> None:
        """Something other than reasoning arrived: the current burst of thinking is over."""
        if self._burst_start is not None:
            self.seconds += max(0.0, at - self._burst_start)
            self._burst_start = None

    def drop(self, at: float) -> None:
        self.pause(at)
        if not self.text or self.dropped:
            return
        self.dropped = True
        self.summary.value = f"thought for {self.seconds:.0f} s" if self.seconds >= 1 else \
            f"thought for {self.seconds:.1f} s"
        self.children = (self.summary,)

    @observe("text")
    def _on_text(self, change) -> None:
        if self.toggle.value:
            self.body.value = _pre(self.text)

    def _on_toggle(self, change) -> None:
        self.toggle.icon = "caret-down" if change["new"] else "caret-right"
        if change["new"]:
            self.body.value = _pre(self.text)
            self.children = (self.toggle, self.body)
            self.body.layout.display = ""
        else:
            self.body.layout.display = "none"


def _pre(text: str) -> str:
    return ('<div style="white-space:pre-wrap;color:var(--jp-ui-font-color2,#666);font-size:12px;'
            f'max-height:16em;overflow:auto">{html.escape(text)}</div>')
