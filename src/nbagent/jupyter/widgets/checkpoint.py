"""The "files changed" line of a finished turn, with its Undo and Redo buttons.

It shows the turn's checkpoint in the state, so an Undo or Redo made anywhere (the panel, /undo) shows
here too."""

from __future__ import annotations

from typing import Any, Callable

import ipywidgets as widgets

from ...render.agent_state import TurnCheckpoint
from ...render.escape import escape_html

SHOWN_FILES = 8


class CheckpointBar(widgets.HBox):
    """Hidden until the turn has a checkpoint; each button's tooltip lists the files it will change."""

    def __init__(self, act: Callable[[str, Any], Any] | None = None, **kwargs):
        """``act(action, arg)``: "undo"/"redo" with the turn number, or "replay" with the cells to run."""
        self.label = widgets.HTML()
        self.undo_button = widgets.Button(description="Undo", icon="undo")
        self.redo_button = widgets.Button(description="Redo", icon="redo")
        self.message = widgets.HTML()
        # Restart and replay: offered after an undo that could not restore every kernel variable;
        # a first click shows the plan, a second (the confirmation) runs it. Never automatic.
        self.replay_button = widgets.Button(description="Restart and replay…", icon="repeat",
                                            layout=widgets.Layout(display="none"))
        self._replay: list[Any] = []
        self._confirming = False
        super().__init__(children=(self.label, self.undo_button, self.redo_button, self.replay_button,
                                   self.message), **kwargs)
        self.add_class("nbagent-checkpoint")
        self.layout.display = "none"
        self.turn = 0
        self.files: list[str] = []
        self._act = act
        self.undo_button.on_click(lambda _b: self.click("undo"))
        self.redo_button.on_click(lambda _b: self.click("redo"))
        self.replay_button.on_click(lambda _b: self.click_replay())

    def show(self, checkpoint: TurnCheckpoint) -> None:
        self.turn, self.files = checkpoint.turn, list(checkpoint.files)
        count = len(self.files)
        self.label.value = _small(f"{count} file{'s' if count != 1 else ''} changed: {_names(self.files)}" if count
                                  else "kernel variables changed")
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
        what = [_names(restored.files)] if restored.files else []
        names = getattr(restored, "names", [])
        if names:
            what.append("kernel: " + _names(names))
        missed = getattr(restored, "not_restored", [])
        text = f"{verb}: {'; '.join(what) or 'nothing needed changing'}"
        if missed:
            text += "; not restored: " + "; ".join(missed[:SHOWN_FILES])
        self.message.value = _small(text)
        self._buttons(undone=action == "undo")
        self._offer_replay(list(getattr(restored, "replay", []) or []) if action == "undo" else [])

    def _offer_replay(self, cells: list[Any]) -> None:
        self._replay, self._confirming = cells, False
        self.replay_button.description = "Restart and replay…"
        self.replay_button.layout.display = "" if cells and self._act is not None else "none"

    def click_replay(self) -> None:
        """First click: show what would run (with the recorded times); second click: run it."""
        from ...checkpoints.replay import describe_plan

        if not self._replay or self._act is None:
            return
        if not self._confirming:
            self._confirming = True
            self.replay_button.description = f"Confirm: run {len(self._replay)} cell(s)"
            self.message.value = (f'<pre style="font-size:12px">{escape_html(describe_plan(self._replay))}</pre>')
            return
        try:
            outcome = self._act("replay", self._replay)
        except Exception as exc:
            self.message.value = _small(str(exc), "#cf222e")
            return
        self._offer_replay([])
        if outcome.failed is not None:
            self.message.value = _small(f"{outcome.stopped()}: {outcome.error}", "#cf222e")
        else:
            self.message.value = _small(f"replayed {len(outcome.ran)} cell(s)")


def _names(files: list[str]) -> str:
    shown = ", ".join(files[:SHOWN_FILES])
    return shown + (f" and {len(files) - SHOWN_FILES} more" if len(files) > SHOWN_FILES else "")


def _small(text: str, colour: str = "#666") -> str:
    return f'<span style="font-size:12px;color:{colour}">{escape_html(text)}</span>'
