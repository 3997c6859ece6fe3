"""%agent executed headlessly (nbclient, as nbconvert and nbval's refresh run notebooks): with no widget
front end the cell stores the turn as one readable output, and a widget view's text/plain fallback is
the turn's final state, not "waiting"."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.integration]

SETUP = """
%load_ext nbagent
from nbagent import Agent
from nbagent.jupyter import use_agent
from nbagent.testing.replies import Reply, Slow
from nbagent.testing.scripted import ScriptedModel
agent = Agent(workspace={workspace!r}, model=ScriptedModel([
    Slow(0.02, Reply(text="word " * 150 + "END.")), Reply(text="Second answer.")], chunk_size=8),
    approval="auto")
use_agent(agent)
"""


def test_a_headless_agent_cell_stores_the_turn_as_one_block_and_the_view_its_final_state(tmp_path):
    notebook = new_notebook(cells=[
        new_code_cell(SETUP.format(workspace=str(tmp_path))),
        new_code_cell("%agent --wait Say many words"),
        new_code_cell("import os; os.environ['NBAGENT_VIEW'] = 'widgets'"),
        new_code_cell("%agent --wait Once more"),
    ])
    NotebookClient(notebook, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    text_cell, widget_cell = notebook.cells[1], notebook.cells[3]

    assert len(text_cell.outputs) == 1, [o.get("output_type") for o in text_cell.outputs]
    assert text_cell.outputs[0]["output_type"] == "stream"  # what nbval (which ignores display updates) sees too
    block = text_cell.outputs[0]["text"]
    assert ("word " * 150 + "END.") in block  # the whole answer, in order, in one output

    (view,) = [o for o in widget_cell.outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    fallback = view["data"]["text/plain"]
    assert fallback.startswith("<nbagent turn (done): Once more>") and "Second answer." in fallback
    nbformat.validate(notebook)
