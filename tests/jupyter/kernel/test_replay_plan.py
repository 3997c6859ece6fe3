"""Restart and replay's plan, from a real InteractiveShell's history and the real .ipynb the kernel runs.

The shell finds its notebook as a kernel started by Jupyter does (JPY_SESSION_NAME); the agent runs on
scripted replies and changes a list in place with kernel_run, which undo cannot put back, so it offers
the plan. The plan matches history entries to notebook cells (ids shown), keeps cells the notebook no
longer has, falls back to the notebook's stored execution counts when the history lost them, never
holds the agent's own code, and runs only when asked, stopping at the first error.
"""

from __future__ import annotations

import nbformat
import pytest

from nbagent.checkpoints.replay import BOTH, HISTORY, NOTEBOOK, ReplayCell, describe_plan, replay_plan
from nbagent.jupyter.kernel.bridge import bridge_from_shell
from nbagent.testing.replies import Call, Reply

TIMED = {"iopub.status.busy": "2026-12-01T10:00:00.000Z", "iopub.execute_input": "2026-12-01T10:00:00.100Z",
         "shell.execute_reply": "2026-12-01T10:00:02.600Z", "iopub.status.idle": "2026-12-01T10:00:02.610Z"}
"""What JupyterLab's "record timing" writes in a cell's metadata: this run took 2.5 s."""


def write_notebook(path, cells):
    """A real .ipynb: ``cells`` are (id, source, stored execution count, metadata)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, id=cell_id, execution_count=count, metadata=metadata)
                for cell_id, source, count, metadata in cells]
    nbformat.write(nb, path)


@pytest.fixture
def notebook_kernel(shell, workspace, monkeypatch):
    """The shell, belonging to workspace/analysis.ipynb as a kernel Jupyter started for it would."""
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    return shell


def kernel_turn(code: str) -> list:
    return [Reply(tool_calls=[Call("kernel_run", {"code": code})]), "done"]


@pytest.mark.process
def test_the_plan_follows_the_history_shows_notebook_cell_ids_keeps_deleted_cells_and_skips_the_agent(
        notebook_kernel, make_agent, workspace):
    shell = notebook_kernel
    write_notebook(workspace / "analysis.ipynb", [
        ("load", "data = [1, 2]\n", 1, {"execution": TIMED}),
        ("sum", "total = sum(data)", 3, {}),
        ("ask", "_ = agent.run('append 3')", 4, {}),
        ("prompt", "%agent what is in data?", None, {}),
        ("more", "y = total * 10", 5, {}),
        ("ask-again", "_ = agent.run('append 4')", 6, {}),
    ])
    shell.run_cell("data = [1, 2]", store_history=True)                   # [1] cell "load"
    shell.run_cell("scratch = 'typed, then deleted'", store_history=True)  # [2] no longer in the notebook
    shell.run_cell("total = sum(data)", store_history=True)               # [3] cell "sum"
    # nbagent is loaded only now: the cells above were not timed by it.
    agent = make_agent(*kernel_turn("data.append(3)"), *kernel_turn("data.append(4)"),
                       kernel=bridge_from_shell(shell), kernel_run_auto=True)
    shell.user_ns["agent"] = agent
    shell.run_cell("_ = agent.run('append 3')", store_history=True)       # [4] the agent, from a cell
    shell.run_cell("y = total * 10", store_history=True)                  # [5] cell "more"
    shell.run_cell("_ = agent.run('append 4')", store_history=True)       # [6] the turn undone below
    assert shell.user_ns["data"] == [1, 2, 3, 4]

    restored = agent.undo()
    assert restored.not_restored == ["data (changed in place)"]
    plan = restored.replay
    assert [(c.execution_count, c.cell_id, c.origin) for c in plan] == [
        (1, "load", BOTH), (2, None, HISTORY), (3, "sum", BOTH), (5, "more", BOTH)]
    assert plan[0].seconds == 2.5  # untimed by nbagent: the time JupyterLab recorded in the cell
    assert plan[1].seconds is None and plan[3].seconds is not None  # [5] ran after nbagent loaded
    assert not any("agent" in c.code or "append" in c.code for c in plan)  # neither the prompts nor kernel_run's code

    text = describe_plan(plan)
    assert "from the kernel's execution history; 3 matched to notebook cells (id shown)" in text
    assert "cell load" in text and "not in the notebook" in text and "about 2.5 s and more" in text

    requests = len(agent.runtime.model.requests)
    outcome = agent.replay(plan)  # the user confirmed
    assert outcome.ran == [1, 2, 3, 5] and outcome.failed is None
    assert (shell.user_ns["data"], shell.user_ns["scratch"], shell.user_ns["y"]) == ([1, 2], "typed, then deleted", 30)
    assert len(agent.runtime.model.requests) == requests  # replaying did not run the agent again


@pytest.mark.process
def test_without_the_history_the_notebook_gives_the_order_by_execution_count_and_replay_stops_at_the_first_error(
        notebook_kernel, make_agent, workspace):
    shell = notebook_kernel
    (workspace / "input.txt").write_text("4")
    write_notebook(workspace / "analysis.ipynb", [  # shown out of run order, as cells moved after running
        ("pairs", "pairs = [n, n]", 3, {}),
        ("read", "n = int(open('input.txt').read())", 2, {"execution": TIMED}),
        ("start", "import math", 1, {}),
        ("draft", "never_ran = 1", None, {}),
        ("prompt", "%agent double it", 5, {}),
    ])
    shell.run_cell("import math", store_history=True)
    shell.run_cell("n = int(open('input.txt').read())", store_history=True)
    shell.run_cell("pairs = [n, n]", store_history=True)
    shell.run_cell("%reset -f in", store_history=True)  # the kernel's input history is gone
    agent = make_agent(*kernel_turn("pairs.append(0)"), kernel=bridge_from_shell(shell), kernel_run_auto=True)
    shell.user_ns["agent"] = agent
    shell.run_cell("_ = agent.run('extend pairs')", store_history=True)

    plan = agent.undo().replay
    assert [(c.execution_count, c.cell_id, c.origin) for c in plan] == [
        (1, "start", NOTEBOOK), (2, "read", NOTEBOOK), (3, "pairs", NOTEBOOK)]
    assert plan[1].seconds == 2.5
    assert ("from the notebook's code cells in the order of their stored execution counts (the kernel's "
            "history was not available)") in describe_plan(plan)

    (workspace / "input.txt").unlink()  # the data the cell read is gone since
    shell.user_ns["pairs"] = "changed by the user"
    outcome = agent.replay(plan)
    assert outcome.ran == [1] and outcome.failed == 2 and outcome.failed_cell_id == "read"
    assert "FileNotFoundError" in (outcome.error or "")
    assert outcome.stopped() == "replay stopped at cell [2] (ran 1 before it, notebook cell read)"
    assert "pairs" not in shell.user_ns  # cleared, and not rebuilt past the error


def test_history_lost_for_early_cells_only_is_filled_from_the_notebook_and_said(notebook_kernel, workspace):
    shell = notebook_kernel
    write_notebook(workspace / "analysis.ipynb", [("one", "a = 1", 1, {}), ("two", "b = a + 1", 3, {})])
    shell.run_cell("a = 1", store_history=True)
    shell.run_cell("%reset -f in", store_history=True)
    shell.run_cell("b = a + 1", store_history=True)
    shell.run_cell("c = b + 1", store_history=True)  # a console cell after the flush
    plan = replay_plan(bridge_from_shell(shell), shell.execution_count)
    assert [(c.execution_count, c.cell_id, c.origin) for c in plan] == [
        (1, "one", NOTEBOOK), (3, "two", BOTH), (4, None, HISTORY)]
    assert "1 matched to notebook cells (id shown); 1 cell(s) (In [1]) from the notebook's stored execution counts" in describe_plan(plan)


def test_a_kernel_without_a_notebook_plans_from_its_history_alone(shell, workspace):
    shell.run_cell("x = 1", store_history=True)
    shell.run_cell("%agent /help", store_history=True)
    shell.run_cell("y = x + 1", store_history=True)
    plan = replay_plan(bridge_from_shell(shell), shell.execution_count)
    assert [(c.execution_count, c.code, c.cell_id, c.origin) for c in plan] == [
        (1, "x = 1", None, HISTORY), (3, "y = x + 1", None, HISTORY)]
    assert "not in the notebook" not in describe_plan(plan)  # there is no notebook to be missing from
    untimed = [ReplayCell(c.execution_count, c.code) for c in plan]  # run before nbagent's timing loaded
    assert "run 2 cell(s), time not known (no cell was timed)," in describe_plan(untimed)


@pytest.mark.process
def test_an_undo_in_the_cell_that_ran_the_agent_leaves_that_cell_out(shell, make_agent):
    agent = make_agent(*kernel_turn("data.append(3)"), kernel=bridge_from_shell(shell), kernel_run_auto=True)
    shell.user_ns["agent"] = agent
    shell.run_cell("data = [1, 2]", store_history=True)
    shell.run_cell("_ = agent.run('append')\nplan = agent.undo().replay", store_history=True)
    assert [(c.execution_count, c.code) for c in shell.user_ns["plan"]] == [(1, "data = [1, 2]")]


def test_a_cell_id_outside_nbformats_pattern_never_reaches_the_plan(notebook_kernel, workspace):
    shell = notebook_kernel
    write_notebook(workspace / "analysis.ipynb", [("ok", "a = 1", 1, {})])
    raw = (workspace / "analysis.ipynb").read_text().replace('"ok"', '"\\u001b[2Jgone"')
    (workspace / "analysis.ipynb").write_text(raw)  # a hostile file: an escape sequence as the id
    shell.run_cell("a = 1", store_history=True)
    plan = replay_plan(bridge_from_shell(shell), shell.execution_count)
    assert [(c.execution_count, c.origin) for c in plan] == [(1, BOTH)]
    assert "\x1b" not in (plan[0].cell_id or "") and "\x1b" not in describe_plan(plan)
