"""A turn of ``%agent`` in a notebook's kernel is reviewed from the server: GET /nbagent/api/changes finds
it (the kernel's agent wrote the shared checkpoints and database) and a partial undo by the server writes
only the cell picked."""

from __future__ import annotations

import json

import pytest

from .live_helpers import disk_sources, start_kernel, write_notebook
from .test_remote_kernel_undo import UserKernel, jp_server_config  # noqa: F401  (the server, without RTC)

pytestmark = [pytest.mark.kernel, pytest.mark.integration]

AGENT = """
get_ipython().run_line_magic("load_ext", "nbagent")
import nbagent.jupyter as nj
from nbagent import Agent
from nbagent.testing import Call, Reply, ScriptedModel
ids = {ids!r}
script = [Reply(tool_calls=[Call("notebook_read", {{"path": "k.ipynb"}})]),
          Reply(tool_calls=[Call("notebook_edit", {{"path": "k.ipynb", "cell_id": i, "source": s}})
                            for i, s in zip(ids, ["a = 2", "b = 2"])]), "Done."]
agent = Agent(model=ScriptedModel(script), approval="auto")
nj.use_agent(agent, get_ipython())
agent.run("edit both cells")  # what %agent --wait runs
agent.session_id
"""


async def test_a_kernel_turn_is_listed_and_partly_undone_by_the_server(jp_serverapp, jp_root_dir, jp_fetch):
    ids = write_notebook(jp_root_dir, "k.ipynb", [("code", "a = 1"), ("code", "b = 1")])
    kernel = UserKernel(jp_serverapp, await start_kernel(jp_fetch, "k.ipynb"))
    try:
        session = (await kernel.run(AGENT.format(ids=ids))).strip("'")
    finally:
        kernel.close()
    assert disk_sources(jp_root_dir / "k.ipynb") == ["a = 2", "b = 2"]
    response = await jp_fetch("nbagent", "api", "changes", params={"path": "k.ipynb"})
    [turn] = json.loads(response.body)["turns"]
    assert turn["session"] == session and [r["cell_id"] for r in turn["rows"]] == ids
    body = {"session": session, "turn": turn["turn"], "only": [ids[1]]}
    response = await jp_fetch("nbagent", "api", "changes", "undo", method="POST", body=json.dumps(body))
    assert json.loads(response.body)["undone"] == [turn["rows"][1]["id"]]
    assert disk_sources(jp_root_dir / "k.ipynb") == ["a = 2", "b = 1"]
