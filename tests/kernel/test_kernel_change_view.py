"""The widget view of kernel changes: the tool row's kernel line (escaped) and the checkpoint bar of a
turn that changed only the kernel, with its restart-and-replay offer that runs only when confirmed."""

from __future__ import annotations

from nbagent.checkpoints import Restored
from nbagent.checkpoints.replay import ReplayCell, ReplayOutcome
from nbagent.engine.agent_state import KernelChange, ToolItem, TurnCheckpoint
from nbagent.jupyter.widgets.checkpoint import CheckpointBar
from nbagent.jupyter.widgets.tools import ToolRow


def test_the_tool_row_shows_the_kernel_line_under_the_call():
    row = ToolRow()
    row.show(ToolItem(call_id="c1", name="kernel_run", status="done", arguments={"code": "..."},
                      kernel=KernelChange(added=("df_clean",), mutated=("df",), deleted=("<b>tmp</b>",),
                                          unchecked=("model",))))
    assert row.kernel == "kernel: + df_clean, ~ df (changed in place), - <b>tmp</b> (1 not checked)"
    assert "&lt;b&gt;tmp&lt;/b&gt;" in row.kernel_view.value and "<b>tmp" not in row.kernel_view.value
    assert row.kernel_view.layout.display == ""
    row.show(ToolItem(call_id="c2", name="bash", status="done"))
    assert row.kernel_view.layout.display == "none"


def test_undo_of_a_kernel_only_turn_offers_restart_and_replay_and_runs_it_only_when_confirmed():
    cells = [ReplayCell(1, "import pandas as pd", 0.5), ReplayCell(2, "df = load()", 42.0)]
    calls = []

    def act(action, arg):
        calls.append((action, arg))
        if action == "replay":
            return ReplayOutcome(ran=[1, 2])
        return Restored("undo", 3, [], names=["x"], not_restored=["df (changed in place)"], replay=cells)

    bar = CheckpointBar(act)
    bar.show(TurnCheckpoint(turn=3, files=()))
    assert "kernel variables changed" in bar.label.value
    bar.click("undo")
    assert "kernel: x" in bar.message.value and "df (changed in place)" in bar.message.value
    assert bar.replay_button.layout.display == ""
    bar.click_replay()  # the first click shows the plan, with the recorded times
    assert calls == [("undo", 3)]
    assert "42.00 s" in bar.message.value and "df = load()" in bar.message.value
    bar.click_replay()  # the confirmation
    assert calls[-1] == ("replay", cells)
    assert "replayed 2 cell(s)" in bar.message.value and bar.replay_button.layout.display == "none"
