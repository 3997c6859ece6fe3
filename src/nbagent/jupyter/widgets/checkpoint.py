"""The "files changed" line of a finished turn, with its Undo and Redo buttons.

It shows the turn's checkpoint in the state, so an Undo or Redo made anywhere (the panel, /undo) shows
here too."""

from __future__ import annotations

from typing import Any, Callable

import ipywidgets as widgets

from ...engine.agent_state import TurnCheckpoint
from ...render.escape import escape_html

SHOWN_FILES = 8


class CheckpointBar(widgets.HBox):
    """Hidden until the turn has a checkpoint; each button's tooltip lists the files it will change."""

    def __init__(self, act: Callable[[str, int], Any] | None = None, **kwargs):
        self.label = widgets.HTML()
        self.undo_button = widgets.Button(description="Undo", icon="undo")
        self.redo_button = widgets.Button(description="Redo", icon="redo")
        self.message = widgets.HTML()
        super().__init__(children=(self.label, self.undo_button, self.redo_button, self.message), **kwargs)
        self.add_class("nbagent-checkpoint")
        self.layout.display = "none"
        self.turn = 0
        self.files: list[str] = []
        self._act = act
        self.undo_button.on_click(lambda _b: self.click("undo"))
        self.redo_button.on_click(lambda _b: self.click("redo"))

    def show(self, checkpoint: TurnCheckpoint) -> None:
        self.turn, self.files = checkpoint.turn, list(checkpoint.files)
        count = len(self.files)
        self.label.value = _small(f"{count} file{'s' if count != 1 else ''} changed: {_names(self.files)}")
        tooltip = "\n".join(self.files[:50])
        self.undo_button.tooltip = f"put back as before turn {self.turn}:\n{tooltip}"
        self.redo_button.tooltip = f"re-apply turn {self.turn}:\n{tooltip}"
        self._buttons(undone=checkpoint.undone)
        self.layout.display = ""

    def _buttons(self, undone: bool) -> None:
        enabled = self._act is not None
        self.undo_button.layout.display = "none" if undone else ""
        self.redo_button.layout.display = "" if undone else "none"
        self.undo_button.disabled = self.redo_button.disabled = not enabled

    def click(self, action: str) -> None:
        """Undo or redo this turn; a refusal (a file changed since, another turn first) is shown."""
        if self._act is None:
            return
        try:
            if self._act is None:  # no buttons without an action (they are disabled)
                return
            restored = self._act(action, self.turn)
        except Exception as exc:  # CheckpointError, or a turn running: say why, change nothing
            self.message.value = _small(str(exc), "#cf222e")
            return
        verb = "undone" if action == "undo" else "redone"
        self.message.value = _small(f"{verb}: {_names(restored.files)}")
        self._buttons(undone=action == "undo")


def _names(files: list[str]) -> str:
    shown = ", ".join(files[:SHOWN_FILES])
    return shown + (f" and {len(files) - SHOWN_FILES} more" if len(files) > SHOWN_FILES else "")


def _small(text: str, colour: str = "#666") -> str:
    return f'<span style="font-size:12px;color:{colour}">{escape_html(text)}</span>'
