"""``POST /nbagent/api/complete`` in a real Jupyter server, the model a scripted OpenAI-compatible server
behind the real openai client: authenticated, streamed as JSON lines, the kernel's names and the
notebook's earlier cells in the prompt (never the outputs), off when configured off, and a client that
hangs up stops the model's request."""

from __future__ import annotations

import asyncio
import json
import time

import nbformat
import pytest
from .live_helpers import start_kernel
from tornado.httpclient import HTTPClientError

from nbagent.jupyter.remote.kernel import LocalKernel
from nbagent.testing import Reply, ScriptedServer
from nbagent.testing.replies import Slow, Stall

EXT = "nbagent.jupyter.server"


@pytest.fixture
def scripted():
    with ScriptedServer(chunk_size=4) as server:
        yield server


@pytest.fixture
def completions_setting():
    return "auto"


@pytest.fixture
def jp_server_config(scripted, completions_setting):
    options = {"base_url": scripted.url, "api_key": "sk-test", "model": "scripted-model", "max_retries": 0,
               "local": "off", "completions": completions_setting, "completion_fim": "chat"}
    return {"ServerApp": {"jpserver_extensions": {EXT: True}},
            "NbAgentServer": {"agent_options": options, "warm_offline_model": False}}


def _notebook(root) -> None:
    nb = nbformat.v4.new_notebook()
    first = nbformat.v4.new_code_cell("import pandas as pd\nsales = load_sales()", id="c1")
    first.outputs = [nbformat.v4.new_output("stream", text="OUTPUT-BULK " * 500)]
    nb.cells = [nbformat.v4.new_markdown_cell("# Revenue", id="c0"), first,
                nbformat.v4.new_code_cell("sales.groupby('region')['']", id="c2"),
                nbformat.v4.new_code_cell("plot()", id="c3")]
    nbformat.write(nb, root / "a.ipynb")


BODY = {"path": "a.ipynb", "cell_id": "c2", "prefix": "sales.groupby('region')['", "suffix": "']"}


def _lines(body: bytes) -> list[dict]:
    return [json.loads(line) for line in body.decode().splitlines() if line.strip()]


async def test_completions_need_authentication(jp_fetch):
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("nbagent", "api", "complete", method="POST", body=json.dumps(BODY),
                       headers={"Authorization": ""})
    assert refused.value.code == 403


@pytest.mark.kernel
@pytest.mark.integration
async def test_a_completion_knows_the_kernels_columns_and_streams(jp_fetch, jp_root_dir, jp_serverapp, scripted):
    _notebook(jp_root_dir)
    kernel_id = await start_kernel(jp_fetch, "a.ipynb")
    kernel = LocalKernel(jp_serverapp.kernel_manager, kernel_id)
    ran = await kernel.execute("import pandas as pd\nsales = pd.DataFrame({'region': ['n'], 'revenue_eur': [1.5]})")
    assert ran["error"] is None, ran
    scripted.responder = lambda body: Reply("revenue_eur")
    # The kernel's first probe imports nbagent there: the first completions may go without its names
    # (they wait two seconds at most); the names come with a later keystroke's.
    deadline = time.monotonic() + 30
    for attempt in range(100):
        body = dict(BODY, prefix=BODY["prefix"] + "_" * attempt)
        response = await jp_fetch("nbagent", "api", "complete", method="POST", body=json.dumps(body))
        prompt = (scripted.last.body or {})["messages"][1]["content"]
        if "Variables in the kernel" in prompt or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.3)
    assert response.headers["Content-Type"].startswith("application/x-ndjson")
    lines = _lines(response.body)
    assert "".join(line.get("text", "") for line in lines) == "revenue_eur"
    assert len(lines) > 2 and lines[-1] == {"done": True}  # streamed in pieces of four characters
    assert "sales: pandas.DataFrame (1x2), columns 'region'" in prompt and "'revenue_eur' float64" in prompt
    assert "import pandas as pd" in prompt and "# # Revenue" in prompt
    assert "sales.groupby('region')['" in prompt and "<CURSOR>']" in prompt and "plot()" in prompt
    assert "OUTPUT-BULK" not in prompt
    sent = len(scripted.model_requests())
    again = await jp_fetch("nbagent", "api", "complete", method="POST", body=json.dumps(body))
    assert "".join(line.get("text", "") for line in _lines(again.body)) == "revenue_eur"
    assert len(scripted.model_requests()) == sent  # the same prompt: from the cache
    scripted.assert_complete()


async def test_a_file_without_a_kernel_is_completed_from_its_text(jp_fetch, scripted):
    scripted.enqueue(Reply("return x"))
    body = {"path": "tool.py", "prefix": "def f(x):\n    ", "suffix": ""}
    response = await jp_fetch("nbagent", "api", "complete", method="POST", body=json.dumps(body))
    assert _lines(response.body)[-1] == {"done": True}
    prompt = (scripted.last.body or {})["messages"][1]["content"]
    assert "Variables in the kernel" not in prompt and prompt.endswith("def f(x):\n    <CURSOR>")


@pytest.mark.parametrize("completions_setting", ["off"])
async def test_completions_switched_off_answer_409(jp_fetch, scripted, completions_setting):
    with pytest.raises(HTTPClientError) as off:
        await jp_fetch("nbagent", "api", "complete", method="POST", body=json.dumps(BODY))
    assert off.value.code == 409 and "off" in json.loads(off.value.response.body if off.value.response else b"{}")["off"]
    assert scripted.model_requests() == []


async def _first_piece(port: int, base_url: str, token: str):
    """A completion request on a raw connection, read up to its first piece of text."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    payload = json.dumps({"path": "b.py", "prefix": "y = ", "suffix": ""}).encode()
    writer.write((f"POST {base_url}nbagent/api/complete HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Authorization: token {token}\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload)
    await writer.drain()
    seen = b""
    while b'{"text"' not in seen:
        seen += await asyncio.wait_for(reader.read(4096), 10)
    return writer


async def test_a_client_that_hangs_up_stops_the_model_request(jp_fetch, jp_http_port, jp_base_url, jp_serverapp,
                                                              scripted):
    scripted.enqueue(Slow(0.1, Reply("x" * 400)))  # a hundred pieces: ten seconds if read to the end
    writer = await _first_piece(jp_http_port, jp_base_url, jp_serverapp.identity_provider.token)
    assert scripted.open_connections == 1
    hung_up = time.monotonic()
    writer.close()
    while scripted.open_connections and time.monotonic() - hung_up < 3:
        await asyncio.sleep(0.02)
    assert scripted.open_connections == 0, "the model's request outlived the editor's"
    assert time.monotonic() - hung_up < 1.0
    assert len(scripted.model_requests()) == 1
    app = next(iter(jp_serverapp.extension_manager.extension_apps[EXT]))
    assert app.completions.completer().in_flight == 0


async def test_a_hang_up_while_the_model_is_silent_stops_the_request_at_once(jp_fetch, jp_http_port, jp_base_url,
                                                                            jp_serverapp, scripted):
    """No piece to write, so no failed write tells the server: the connection's close does."""
    scripted.enqueue(Stall(10, after_chunks=2, reply=Reply("x" * 40)))
    app = next(iter(jp_serverapp.extension_manager.extension_apps[EXT]))
    writer = await _first_piece(jp_http_port, jp_base_url, jp_serverapp.identity_provider.token)
    assert app.completions.completer().in_flight == 1
    hung_up = time.monotonic()
    writer.close()
    while app.completions.completer().in_flight and time.monotonic() - hung_up < 3:
        await asyncio.sleep(0.02)
    assert app.completions.completer().in_flight == 0, "the model's request outlived the editor's"
    assert time.monotonic() - hung_up < 1.0
