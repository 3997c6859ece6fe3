"""The server extension's /nbagent/mcp route, driven by the SDK's client against a real Jupyter server:
authenticated like the other routes, a notebook read and edited by cell id, writes gated by mcp_approval."""

from __future__ import annotations

import nbformat
import pytest
from tests.paths import TOY_MCP_SERVER

pytest.importorskip("mcp")
pytestmark = [pytest.mark.process, pytest.mark.integration]


@pytest.fixture
def jp_server_config(model, request):
    approval, timeout = (request.param, 30.0) if isinstance(getattr(request, "param", None), str) else \
        getattr(request, "param", ("auto", 30.0))
    return {
        "ServerApp": {"jpserver_extensions": {"nbagent.jupyter.server": True}},
        "NbAgentServer": {"model_factory": lambda session_id: model, "idle_close_seconds": 0.2,
                          "mcp_approval": approval, "mcp_approval_timeout": timeout},
    }


@pytest.fixture
def notebook(jp_root_dir):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="setup")]
    path = jp_root_dir / "open.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture
def mcp_url(jp_fetch, jp_http_port, jp_base_url):
    # jp_fetch: pytest-jupyter starts the HTTP server (on jp_http_port) only for a test that asks for it
    return f"http://localhost:{jp_http_port}{jp_base_url}nbagent/mcp"


async def _session(url: str, headers: dict, *steps):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            return [await step(client) for step in steps]


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


async def test_an_outside_agent_reads_and_edits_a_notebook_by_cell_id(mcp_url, jp_auth_header, notebook):
    names, read, edit = await _session(
        mcp_url, jp_auth_header,
        lambda c: c.list_tools(),
        lambda c: c.call_tool("notebook_read", {"path": "open.ipynb"}),
        lambda c: c.call_tool("notebook_edit", {"path": "open.ipynb", "cell_id": "setup", "source": "x = 2"}))
    assert "notebook_edit" in {t.name for t in names.tools}
    assert "x = 1" in _text(read)
    assert not edit.is_error, _text(edit)
    assert nbformat.read(notebook, as_version=4).cells[0].source == "x = 2"


@pytest.mark.parametrize("jp_server_config", ["ask"], indirect=True)
async def test_ask_mode_denies_writes_and_says_how_to_allow_them(mcp_url, jp_auth_header, notebook):
    before = notebook.read_bytes()
    _, edit = await _session(
        mcp_url, jp_auth_header,
        lambda c: c.call_tool("notebook_read", {"path": "open.ipynb"}),
        lambda c: c.call_tool("notebook_edit", {"path": "open.ipynb", "cell_id": "setup", "source": "x = 3"}))
    assert edit.is_error and "mcp_approval" in _text(edit)
    assert notebook.read_bytes() == before


async def test_the_route_needs_a_logged_in_user(jp_fetch, jp_serverapp):
    from tornado.httpclient import HTTPClientError

    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("nbagent", "mcp", method="POST", body="{}", headers={"Authorization": ""})
    assert refused.value.code == 403


async def test_the_panel_lists_the_configured_servers(jp_fetch, jp_root_dir):
    import json

    (jp_root_dir / ".nbagent").mkdir(exist_ok=True)
    (jp_root_dir / ".nbagent" / "mcp.json").write_text(json.dumps(
        {"mcpServers": {"repo": {"command": "mcp-server-git", "trust": "read"}}}))
    response = await jp_fetch("nbagent", "api", "mcp")
    (row,) = json.loads(response.body)["servers"]
    # not approved on this machine for this workspace: listed, never started (issue 26, finding 1)
    assert row["name"] == "repo" and row["source"] == "workspace" and row["status"] == "needs approval"
    assert row["enabled"] is False and row["trust"] == {"*": "ask"}  # a workspace's own trust is ignored


async def test_mcp_serve_started_inside_jupyterlab_edits_through_the_server(jp_fetch, jp_root_dir, notebook):
    """A terminal of the server inherits NBAGENT_SERVER_INFO: ``nbagent mcp serve`` there sends its
    notebook edits to the server (the one writer of notebooks), as a kernel's agent does."""
    import os
    import sys

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from nbagent.jupyter.server.kernel_secret import ENV_VAR

    await jp_fetch("nbagent", "api", "settings")
    assert os.environ.get(ENV_VAR)  # the extension put its runtime file's path in the environment
    errlog = jp_root_dir / "serve.err"
    params = StdioServerParameters(command=sys.executable, env={ENV_VAR: os.environ[ENV_VAR]}, args=[
        "-m", "nbagent.cli", "mcp", "serve", "--workspace", str(jp_root_dir), "--approval", "auto"])
    with open(errlog, "w") as err:
        async with Client(stdio_client(params, errlog=err), mode="legacy") as client:
            await client.call_tool("notebook_read", {"path": "open.ipynb"})
            edit = await client.call_tool("notebook_edit", {"path": "open.ipynb", "cell_id": "setup",
                                                            "source": "x = 5"})
    assert not edit.is_error, _text(edit)
    assert nbformat.read(notebook, as_version=4).cells[0].source == "x = 5"
    assert "notebooks go through the Jupyter server at http" in errlog.read_text()


async def _panel(api, connect):
    """A panel tab: a session's socket, past its snapshot."""
    client = await connect((await api("POST", "sessions"))["id"])
    assert (await client.next())["type"] == "snapshot"
    return client


@pytest.mark.parametrize("jp_server_config", ["ask"], indirect=True)
@pytest.mark.parametrize("decision", ["approve", "deny"])
async def test_ask_mode_asks_in_the_open_panel(mcp_url, jp_auth_header, notebook, api, connect, decision):
    import asyncio

    panel, other_tab = await _panel(api, connect), await _panel(api, connect)
    edit = asyncio.ensure_future(_session(
        mcp_url, jp_auth_header, lambda c: c.call_tool("notebook_read", {"path": "open.ipynb"}),
        lambda c: c.call_tool("notebook_edit", {"path": "open.ipynb", "cell_id": "setup", "source": "x = 4"})))
    request = await panel.until("approval_request")
    assert request["name"] == "notebook_edit" and request["arguments"]["source"] == "x = 4"
    assert request["diff"] and "x = 4" in request["diff"]  # the card shows the change before it is made
    await other_tab.until("approval_request", call_id=request["call_id"])  # every tab sees the card
    assert not edit.done() and nbformat.read(notebook, as_version=4).cells[0].source == "x = 1"
    await panel.send(type="approval", call_id=request["call_id"], decision=decision)
    _, result = await asyncio.wait_for(edit, 30)
    decided = await other_tab.until("approval_decision", call_id=request["call_id"])
    assert decided["decision"] == decision
    source = nbformat.read(notebook, as_version=4).cells[0].source
    if decision == "approve":
        assert not result.is_error and source == "x = 4", _text(result)
    else:
        assert result.is_error and "denied by the nbagent user" in _text(result) and source == "x = 1"
        assert "mcp_approval" not in _text(result)  # the user said no: no hint about config


@pytest.mark.parametrize("jp_server_config", [("ask", 0.5)], indirect=True)
async def test_no_answer_in_the_panel_denies_after_the_timeout(mcp_url, jp_auth_header, notebook, api, connect):
    panel = await _panel(api, connect)
    _, edit = await _session(
        mcp_url, jp_auth_header, lambda c: c.call_tool("notebook_read", {"path": "open.ipynb"}),
        lambda c: c.call_tool("notebook_edit", {"path": "open.ipynb", "cell_id": "setup", "source": "x = 9"}))
    assert edit.is_error and "no answer in the JupyterLab panel within 0.5 s" in _text(edit)
    request = await panel.until("approval_request")
    await panel.until("approval_decision", call_id=request["call_id"], decision="deny")  # the card goes away
    assert nbformat.read(notebook, as_version=4).cells[0].source == "x = 1"


async def test_the_panel_lists_a_live_sessions_servers_as_they_are(api, connect, jp_root_dir, model):
    import json
    import sys
    from pathlib import Path

    from nbagent.testing.replies import Reply

    toy = TOY_MCP_SERVER
    (jp_root_dir / ".nbagent").mkdir(exist_ok=True)
    (jp_root_dir / ".nbagent" / "mcp.json").write_text(json.dumps(
        {"mcpServers": {"toy": {"command": sys.executable, "args": [str(toy)]}}}))
    await api("PUT", "settings", body={"toolsets": ["notebook", "mcp:toy"]})
    sid = (await api("POST", "sessions"))["id"]
    (configured,) = (await api("GET", "mcp", params={"session": sid}))["servers"]
    assert configured["status"] == "needs approval"  # the session is not open: the configuration only
    panel = await connect(sid)
    model.enqueue(Reply(text="hello"))
    await panel.send(type="prompt", text="hi")
    # The panel shows the workspace server's whole launch on a card before anything starts.
    request = await panel.until("approval_request", timeout=60, name="mcp_server")
    assert request["arguments"]["command"] == sys.executable and request["arguments"]["args"] == [str(toy)]
    await panel.send(type="approval", call_id=request["call_id"], decision="approve")
    await panel.until("turn_end", timeout=60)
    (live,) = (await api("GET", "mcp", params={"session": sid}))["servers"]
    assert live["status"] == "running" and {"echo", "grow"} <= set(live["tools"])
