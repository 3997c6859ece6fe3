"""Reasoning: one reasoning item of a turn, collapsed while it streams.

Once the turn has ended only "thought for N s" remains."""

from __future__ import annotations


import ipywidgets as widgets
from traitlets import Bool, Unicode, observe

from ...render.escape import escape_html


class Reasoning(widgets.VBox):
    text = Unicode("")
    dropped = Bool(False)
    """True once the turn ended and the panel gave way to its one-line summary."""

    def __init__(self, **kwargs):
        self.toggle = widgets.ToggleButton(value=False, description="thinking…", icon="caret-right",
                                           layout=widgets.Layout(width="auto", align_self="flex-start"))
        self.body = widgets.HTML(layout=widgets.Layout(display="none"))
        self.summary = widgets.Label()
        super().__init__(children=(self.toggle,), **kwargs)
        self.add_class("nbagent-reasoning")
        self.toggle.observe(self._on_toggle, "value")

    @property
    def expanded(self) -> bool:
        return self.toggle.value

    def show(self, text: str, ended: bool, seconds: float | None) -> None:
        """The item's text so far; ``ended``: the turn is over, so only the summary line stays."""
        self.text = text
        if ended and not self.dropped:
            self.dropped = True
            self.summary.value = _summary(text, seconds)
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


def _summary(text: str, seconds: float | None) -> str:
    if seconds is None:  # it began before this view's agent was watched
        return f"thought ({len(text.split())} words)"
    return f"thought for {seconds:.0f} s" if seconds >= 1 else f"thought for {seconds:.1f} s"


def _pre(text: str) -> str:
    return ('<div style="white-space:pre-wrap;color:var(--jp-ui-font-color2,#666);font-size:12px;'
            f'max-height:16em;overflow:auto">{escape_html(text)}</div>')
