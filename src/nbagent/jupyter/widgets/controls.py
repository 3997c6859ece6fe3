"""The turn's controls: Stop, Abort and the number of prompts queued behind the turn.

Stop kills the command in flight and keeps the turn; Abort ends the turn and clears the queue."""

from __future__ import annotations

from typing import Callable

import ipywidgets as widgets
from traitlets import Bool, Int, observe


class Controls(widgets.HBox):
    queued = Int(0)
    running = Bool(True)

    def __init__(self, *, stop: Callable[[], object], abort: Callable[[], object], **kwargs):
        self.stop_button = widgets.Button(description="Stop", icon="stop", tooltip="kill the running command")
        self.abort_button = widgets.Button(description="Abort", icon="times", button_style="warning",
                                           tooltip="end the turn and clear the queue")
        self.queue_label = widgets.Label()
        super().__init__(children=(self.stop_button, self.abort_button, self.queue_label), **kwargs)
        self.add_class("nbagent-controls")
        self.stop_button.on_click(lambda _b: stop())
        self.abort_button.on_click(lambda _b: abort())
        self._render()

    @observe("queued", "running")
    def _render(self, change=None) -> None:
        self.queue_label.value = "" if not self.queued else f"{self.queued} queued"
        # Hidden when the turn ends (one frontend message; disabling each button too would cost two more).
        self.layout.display = "" if self.running else "none"
