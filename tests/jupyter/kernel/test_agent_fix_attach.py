"""%agent fix (the kernel's last error) and %agent --attach (Out[N], a variable) in a real ipykernel,
against the scripted HTTP server through the real openai client."""

from __future__ import annotations

import pytest
from jupyter_client.manager import start_new_kernel

from nbagent.testing import Reply
from nbagent.testing.server import ScriptedServer

from .real_kernel import run

pytestmark = pytest.mark.integration

SETUP = """
%load_ext nbagent
%matplotlib inline
import matplotlib.pyplot as plt
import pandas as pd
from nbagent import Agent
from nbagent.jupyter import use_agent
agent = Agent(workspace={workspace!r}, model="m1", base_url={url!r}, api_key="sk-test", approval="auto",
              max_retries=0, repo_map=False, memory_embeddings="off")
use_agent(agent)
"""


@pytest.fixture
def kernel(tmp_path):
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def _error_cell(kc, code: str) -> None:
    reply = kc.execute_interactive(code, timeout=60, store_history=True, output_hook=lambda msg: None)
    assert reply["content"]["status"] == "error"


def _last_user(body: dict):
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def test_fix_sends_the_failing_cell_its_traceback_and_the_names_it_mentions(kernel, tmp_path):
    with ScriptedServer(Reply(text="Column b is missing: use a."), Reply(text="a line rising")) as server:
        run(kernel, SETUP.format(workspace=str(tmp_path), url=server.url))
        run(kernel, "sales = pd.DataFrame({'a': [1, 2, 3]})")
        _error_cell(kernel, "total = sales['b'].sum()")
        out = run(kernel, "%agent --wait fix")
        assert "Column b is missing" in out
        shown = kernel.execute_interactive("fig, ax = plt.subplots(figsize=(4, 3)); ax.plot([1, 2, 5]); fig",
                                           timeout=60, store_history=True, output_hook=lambda msg: None)
        count = shown["content"]["execution_count"]
        run(kernel, f"%agent --wait --attach Out[{count}] --attach sales what stands out?")
        fix, look = (r.body for r in server.model_requests())
    prompt = _last_user(fix)
    prompt = prompt if isinstance(prompt, str) else prompt[0]["text"]
    assert "Fix the error cell In[" in prompt and "] raised: KeyError: 'b'" in prompt
    assert "total = sales['b'].sum()" in prompt and "KeyError" in prompt.split("The traceback:")[1]
    assert "- sales: pandas.DataFrame 3x1" in prompt
    parts = _last_user(look)
    assert parts[0]["text"].startswith("what stands out?")
    assert "[image 1: attachment 1: image/png" in parts[0]["text"]
    assert "[attachment 2: an output]" in parts[0]["text"] and "sales" not in parts[0]["text"].split("attachment 2")[0][-5:]
    assert [p["type"] for p in parts[1:]] == ["text", "image_url"]


def test_fix_without_an_error_says_so(kernel, tmp_path):
    with ScriptedServer() as server:
        run(kernel, SETUP.format(workspace=str(tmp_path), url=server.url))
        reply = kernel.execute_interactive("%agent fix", timeout=60, store_history=True, output_hook=lambda m: None)
    assert reply["content"]["status"] == "error" and "no error to fix" in reply["content"]["evalue"]


def test_attach_names_what_it_cannot_find(kernel, tmp_path):
    with ScriptedServer() as server:
        run(kernel, SETUP.format(workspace=str(tmp_path), url=server.url))
        reply = kernel.execute_interactive("%agent --attach Out[99] look", timeout=60, store_history=True,
                                           output_hook=lambda m: None)
    assert reply["content"]["status"] == "error" and "Out[99] does not exist" in reply["content"]["evalue"]
