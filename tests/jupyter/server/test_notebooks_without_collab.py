"""A server where jupyter-collaboration cannot even be imported: the agent's notebook path still works."""

from __future__ import annotations

import asyncio
import sys

import nbformat
import pytest

from nbagent.tools import notebook as nbt

from .live_helpers import RUN_CELLS, check_run_result, start_kernel, tool_ctx, write_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.integration]


@pytest.fixture
def jp_server_config(model, monkeypatch):
    for name in ("jupyter_server_ydoc", "jupyter_ydoc", "pycrdt", "jupyter_collaboration"):
        monkeypatch.setitem(sys.modules, name, None)  # "import x" now raises ImportError
    return {"ServerApp": {"jpserver_extensions": {"nbagent.jupyter.server": True}},
            "NbAgentServer": {"model_factory": lambda session_id: model}}


async def test_edits_and_runs_go_to_the_file(jp_serverapp, jp_root_dir, jp_fetch):
    with pytest.raises(ImportError):
        import jupyter_server_ydoc  # noqa: F401
    assert "jupyter_server_ydoc" not in jp_serverapp.web_app.settings
    ids = write_notebook(jp_root_dir, "plain.ipynb", RUN_CELLS)
    ctx = tool_ctx(jp_root_dir)
    text = await asyncio.to_thread(nbt.notebook_read, ctx, "plain.ipynb")
    assert "read from the file" in text
    await asyncio.to_thread(nbt.notebook_edit, ctx, "plain.ipynb", ids[0], "x = 21  # the answer, halved")
    await start_kernel(jp_fetch, "plain.ipynb")
    ran = await asyncio.to_thread(nbt.notebook_run, ctx, "plain.ipynb", ids)
    check_run_result(ran, ids)
    assert ran.endswith("kernel: + x")  # what the run did to the kernel's variables (its watcher's lines)
    nb = nbformat.read(jp_root_dir / "plain.ipynb", as_version=4)
    assert nb.cells[0].source == "x = 21  # the answer, halved"
    assert nb.cells[1].execution_count == 2 and nb.cells[1].outputs[0].text == "42\n"
    assert nb.cells[2].outputs[0].ename == "ZeroDivisionError" and nb.cells[3].outputs == []
    nbformat.validate(nb)
