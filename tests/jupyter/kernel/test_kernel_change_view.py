"""The widget view of kernel changes: the tool row's kernel line (escaped) and the checkpoint bar of a
turn that changed only the kernel, with its restart-and-replay offer that runs only when confirmed."""

from __future__ import annotations

import pytest
from nbagent.checkpoints import Restored
from nbagent.checkpoints.replay import ReplayCell, ReplayOutcome
from nbagent.render.agent_state import KernelChange, ToolItem, TurnCheckpoint
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


@pytest.mark.process
def test_agent_check_and_replay_through_the_magic(shell, make_agent, workspace):
    """%agent check NOTEBOOK runs the check (a real fresh kernel); "check the tests" stays a prompt;
    /undo offers restart-and-replay and /replay confirm runs it in this shell, stopping at the first error."""
    import nbformat
    from IPython.utils.capture import capture_output

    import nbagent.jupyter as nj
    from nbagent.jupyter.kernel.bridge import bridge_from_shell
    from nbagent.testing.replies import Call, Reply

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("print(from_the_live_kernel)")]
    nbformat.write(nb, workspace / "nb.ipynb")
    shell.run_cell("data = [1, 2]\nbig = list(range(10))", store_history=True)
    shell.run_cell("1 / 0", store_history=True)  # a failing cell in the history: replay stops there
    agent = make_agent(Reply(tool_calls=[Call("kernel_run", {"code": "data.append(3)"})]), "done",
                       "a prompt, not the check", kernel=bridge_from_shell(shell), kernel_run_auto=True)
    nj.use_agent(agent, shell)

    def run(cell: str) -> str:
        with capture_output() as out:
            shell.run_cell(cell)
        return out.stdout + out.stderr

    assert "uses from_the_live_kernel: no cell defines it" in run("%agent check nb.ipynb")
    agent.run("append to data")
    undone = run("%agent /undo")
    assert "not restored: data (changed in place)" in undone and "/replay shows them" in undone
    plan = run("%agent /replay")
    assert "[1]" in plan and "data = [1, 2]" in plan and "/replay confirm runs them" in plan
    shell.user_ns["data"] = "changed again"
    replayed = run("%agent /replay confirm")
    assert "replay stopped at cell [2] (ran 1 before it)" in replayed and "ZeroDivisionError" in replayed
    assert shell.user_ns["data"] == [1, 2]  # rebuilt by the replay of cell [1]
    run("%agent --wait check the tests please")
    assert agent.runtime.model.requests[-1].messages[-1]["content"].endswith("check the tests please")
