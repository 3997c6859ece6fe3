"""Restart and replay in a real ipykernel (through jupyter_client) that belongs to a real .ipynb.

The kernel is started as Jupyter starts one for a notebook (JPY_SESSION_NAME names it); cells are
execute requests with history, as JupyterLab sends them. The agent (scripted replies) changes a list in
place; undo cannot put it back and offers the plan, which the test reads as JSON.
"""

from __future__ import annotations

import json
import os

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from .real_kernel import run

pytestmark = [pytest.mark.kernel, pytest.mark.integration]

SETUP = """
import json
from nbagent import Agent
from nbagent.jupyter.kernel.bridge import bridge_from_shell
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

def make_agent(code):
    model = ScriptedModel([Reply(tool_calls=[Call("kernel_run", {{"code": code}})]), Reply(text="done")])
    return Agent(workspace={workspace!r}, model=model, approval="auto", kernel_run_auto=True, memory=False,
                 kernel=bridge_from_shell(get_ipython()))
"""


def test_a_real_kernel_plans_from_its_history_and_its_notebook_and_replays_on_request(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("rows = [1, 2]", id="rows", execution_count=2, metadata={"execution": {
            "iopub.execute_input": "2026-12-01T09:00:00Z", "shell.execute_reply": "2026-12-01T09:00:07Z"}}),
        nbformat.v4.new_code_cell("agent = make_agent('rows.append(3)')\n_ = agent.run('add a row')",
                                  id="ask", execution_count=4),
    ]
    nbformat.write(nb, tmp_path / "analysis.ipynb")
    env = {**os.environ, "JPY_SESSION_NAME": "analysis.ipynb"}
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        run(kc, SETUP.format(workspace=str(tmp_path)))                    # [1] setup, not in the notebook
        run(kc, "rows = [1, 2]")                                          # [2] cell "rows"
        run(kc, "label = 'console'")                                      # [3] not in the notebook
        run(kc, "agent = make_agent('rows.append(3)')\n_ = agent.run('add a row')")  # [4] the agent
        printed = run(kc, "r = agent.undo()\n"
                          "print(json.dumps([r.not_restored, "
                          "[[c.execution_count, c.cell_id, c.origin, c.seconds] for c in r.replay]]))")
        not_restored, plan = json.loads(printed.strip().splitlines()[-1])
        assert not_restored == ["rows (changed in place)"]
        assert [p[:3] for p in plan] == [[1, None, "history"], [2, "rows", "history+notebook"], [3, None, "history"]]
        assert plan[1][3] == 7.0  # timed by JupyterLab's record in the cell (nbagent loaded after it ran)
        printed = run(kc, "rows = 'changed since'\n"
                          "o = agent.replay(r.replay)\nprint(json.dumps([o.ran, o.failed, rows, label]))")
        assert json.loads(printed.strip().splitlines()[-1]) == [[1, 2, 3], None, [1, 2], "console"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
