"""A chart drawn by notebook_run in a real kernel of a real Jupyter server reaches the next request as
an image: Chat Completions, Responses and an Ollama-style server, through the real openai client; a
model marked blind gets the caption only."""

from __future__ import annotations

import asyncio
import base64

import pytest

from nbagent import Agent
from nbagent.testing import Call, Reply
from nbagent.testing.served import ServedContext
from nbagent.testing.server import ScriptedServer

from .live_helpers import start_kernel, write_notebook

pytestmark = pytest.mark.integration

CHART = ("import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
         "import matplotlib.pyplot as plt\nplt.figure(figsize=(5, 3))\nplt.bar(['a', 'b'], [3, 7])\n"
         "plt.title('b is larger')\nplt.show()")


def _images(body: dict, api: str) -> list[str]:
    if api == "responses":
        return [p["image_url"] for i in body["input"] if i.get("type") == "function_call_output"
                and isinstance(i["output"], list) for p in i["output"] if p["type"] == "input_image"]
    return [p["image_url"]["url"] for m in body["messages"] if isinstance(m.get("content"), list)
            for p in m["content"] if p["type"] == "image_url"]


@pytest.mark.parametrize("api, served, sees", [
    ("chat", None, True), ("responses", None, True),
    ("chat", ServedContext("ollama", context=65_536, model="m1", vision=True), True),
    ("chat", None, False),
])
async def test_a_chart_drawn_by_notebook_run_reaches_the_next_request(jp_serverapp, jp_root_dir, jp_fetch,
                                                                      api, served, sees):
    ids = write_notebook(jp_root_dir, "chart.ipynb", [("code", CHART)])
    await start_kernel(jp_fetch, "chart.ipynb")
    with ScriptedServer(serves=served) as server:
        server.enqueue(Reply(tool_calls=[Call("notebook_run", {"path": "chart.ipynb", "cell_ids": ids})]),
                       Reply(text="b is larger than a."))
        agent = Agent(workspace=jp_root_dir, model="m1", base_url=server.url, api_key="sk-test", api=api,
                      approval="auto", tool_approvals={"notebook_run": "never"}, max_retries=0, repo_map=False,
                      memory_embeddings="off", vision=None if sees else False)
        try:
            result = await asyncio.to_thread(agent.run, "draw the chart and tell me what it shows")
        finally:
            await asyncio.to_thread(agent.close)
        server.assert_complete()
        body = server.model_requests()[-1].body
    (call,) = result.tool_calls
    assert not call["is_error"], call
    caption = f"[image 1: chart.ipynb cell {ids[0]} output 1: image/png"
    assert caption in call["output"]
    images = _images(body, api)
    if sees:
        assert len(images) == 1 and base64.b64decode(images[0].split(",", 1)[1])[:4] == b"\x89PNG"
    else:
        assert images == [] and caption in body["messages"][-1]["content"]
