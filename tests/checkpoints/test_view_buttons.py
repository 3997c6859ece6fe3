"""The %agent live view of a finished turn: its "files changed" line and the Undo/Redo buttons."""

from __future__ import annotations

import pytest

from nbagent import Agent
from nbagent.ids import short_id
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

from .repos import files_of

pytestmark = pytest.mark.process

pytest.importorskip("ipywidgets")


def test_undo_and_redo_buttons_on_a_finished_turn(project):
    from nbagent.jupyter.widgets.view_registry import hub_for

    original = files_of(project)
    edit = Call("write_file", {"path": "analysis.ipynb", "content": '{"cells": [], "metadata": {}, '
                                                                   '"nbformat": 4, "nbformat_minor": 5}'})
    agent = Agent(model=ScriptedModel([Reply(tool_calls=[edit]), "Emptied."]), workspace=project,
                  approval="auto")
    try:
        hub = hub_for(agent)
        view = hub.turn_view("empty the notebook", short_id("turn_"))
        hub.submit(view, "empty the notebook").result(30)
        assert view.wait(10)
        view.flush()
        bar = view.checkpoint
        assert bar.layout.display == "" and "1 file changed: analysis.ipynb" in bar.label.value
        assert "analysis.ipynb" in bar.undo_button.tooltip and bar.redo_button.layout.display == "none"
        edited = files_of(project)

        bar.undo_button.click()
        assert files_of(project) == original and "undone: analysis.ipynb" in bar.message.value
        assert bar.undo_button.layout.display == "none" and bar.redo_button.layout.display == ""
        bar.redo_button.click()
        assert files_of(project) == edited
        bar.redo_button.click()  # nothing left to redo: said in the bar, nothing changes
        assert "nothing to redo" in bar.message.value and files_of(project) == edited
    finally:
        agent.close()
