"""kernel_undo and kernel_redo of the served kernel tools: ``nbagent mcp serve`` against a real Jupyter
server's kernel, and the ``/nbagent/mcp`` route with two MCP sessions whose records do not mix."""

from __future__ import annotations

import pytest

from .live_helpers import start_kernel
from .test_mcp_kernel import _route, _serve, _text

pytest.importorskip("mcp")
pytestmark = [pytest.mark.kernel, pytest.mark.integration]


@pytest.fixture
def jp_server_config(model, monkeypatch):
    monkeypatch.setenv("NBAGENT_KERNEL_RUN_AUTO", "1")  # kernel_run, kernel_undo and kernel_redo run in auto mode
    return {
        "ServerApp": {"jpserver_extensions": {"nbagent.jupyter.server": True}},
        "NbAgentServer": {"model_factory": lambda session_id: model, "idle_close_seconds": 0.2,
                          "mcp_approval": "auto", "mcp_toolsets": ["notebook", "kernel"]},
    }


@pytest.fixture
def server_url(jp_fetch, jp_http_port, jp_base_url):
    return f"http://localhost:{jp_http_port}{jp_base_url}"


async def test_mcp_serve_undoes_and_redoes_its_last_kernel_run(jp_fetch, jp_root_dir, server_url, jp_serverapp):
    from mcp import Client

    await start_kernel(jp_fetch, "work.ipynb")
    token = jp_serverapp.identity_provider.token
    async with Client(_serve(jp_root_dir, server_url, token, "work.ipynb", "--approval", "auto"),
                      mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"kernel_run", "kernel_undo", "kernel_redo"} <= set(tools)
        assert "force" in tools["kernel_undo"].input_schema["properties"]
        assert (await client.call_tool("kernel_undo", {})).is_error  # nothing to undo yet
        await client.call_tool("kernel_run", {"code": "df = [1, 2]\nrows = []"})
        ran = await client.call_tool("kernel_run", {"code": "df = 'replaced'\nrows.append(1)\nnew = 3\ndel df"})
        assert _text(ran).endswith("kernel: + new, ~ rows (changed in place), - df"), _text(ran)

        undone = await client.call_tool("kernel_undo", {})
        assert not undone.is_error, _text(undone)
        assert "names restored: df, new" in _text(undone) and "rows (changed in place)" in _text(undone)
        state = await client.call_tool("kernel_run", {"code": "(df, 'new' in dir(), rows)"})
        assert "([1, 2], False, [1])" in _text(state)

        redone = await client.call_tool("kernel_redo", {})
        assert not redone.is_error and "bound again: df, new" in _text(redone), _text(redone)
        state = await client.call_tool("kernel_run", {"code": "('df' in dir(), new)"})
        assert "(False, 3)" in _text(state)

        # An undo after the user rebound a name of that run asks first; force overwrites.
        await client.call_tool("kernel_run", {"code": "x = 'agent'"})
        await _user_runs(jp_serverapp, "x = 'user'")
        refused = await client.call_tool("kernel_undo", {})
        assert refused.is_error and "you changed these kernel variables since: x" in _text(refused)
        assert "force=true" in _text(refused)
        forced = await client.call_tool("kernel_undo", {"force": True})
        assert not forced.is_error and "names restored: x" in _text(forced), _text(forced)


async def test_two_mcp_sessions_each_undo_only_their_own_runs(jp_fetch, server_url, jp_auth_header):
    await start_kernel(jp_fetch, "a.ipynb")
    url = server_url + "nbagent/mcp"
    first, = await _route(url, jp_auth_header, lambda c: c.call_tool("kernel_run", {"code": "mine = 1"}))
    assert not first.is_error
    # Another session (another client) ran nothing: it has nothing to undo, and cannot undo the first's run.
    theirs, = await _route(url, jp_auth_header, lambda c: c.call_tool("kernel_undo", {}))
    assert theirs.is_error and "holds no record of these calls" in _text(theirs), _text(theirs)

    async def run_then_undo(client):
        await client.call_tool("kernel_run", {"code": "other = 2"})
        return await client.call_tool("kernel_undo", {})

    undone, listed = await _route(url, jp_auth_header, run_then_undo,
                                  lambda c: c.call_tool("kernel_variables", {}))
    assert "names restored: other" in _text(undone), _text(undone)
    assert "mine" in _text(listed) and "other" not in _text(listed)


async def _user_runs(serverapp, code: str) -> None:
    kernel_id = serverapp.kernel_manager.list_kernel_ids()[0]
    client = serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=30)
        reply = await client.execute_interactive(code, timeout=30)
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()


OWNERS = ("len(__import__('nbagent.jupyter.kernel.watch', fromlist=['_LEDGERS'])._LEDGERS.get(get_ipython(), {}))")
"""How many callers keep records in the kernel (read there, as the user could)."""


async def test_an_ended_route_session_releases_its_records_in_the_kernel(jp_fetch, server_url, jp_auth_header,
                                                                          jp_serverapp):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from nbagent.jupyter.kernel.watch import watch_code
    from nbagent.mcp_server.serve import caller_of

    await start_kernel(jp_fetch, "a.ipynb")
    session_ids: list[str] = []

    async def seen(response) -> None:
        if response.headers.get("mcp-session-id"):
            session_ids.append(response.headers["mcp-session-id"])

    async with create_mcp_http_client(headers=jp_auth_header) as http:
        http.event_hooks = {"response": [seen]}
        async with Client(streamable_http_client(server_url + "nbagent/mcp", http_client=http), mode="legacy") as c:
            assert not (await c.call_tool("kernel_run", {"code": "mine = [1]\nmine.append(2)"})).is_error
            assert await _kernel_value(jp_serverapp, OWNERS) == "1"
    # Leaving the client sent DELETE: the session ended, and its records in the kernel went with it.
    owner = caller_of(session_ids[0])
    assert await _eventually(lambda: _kernel_value(jp_serverapp, OWNERS), "0")
    targets = await _kernel_value(jp_serverapp, watch_code("targets", {"owner": owner}), stdout=True)
    assert "holds no record of these calls" in targets and '"records": []' in targets
    assert await _kernel_value(jp_serverapp, "mine") == "[1, 2]"  # the variables stay: only the record goes


async def test_a_stdio_server_that_exits_releases_its_records(jp_fetch, jp_root_dir, server_url, jp_serverapp):
    from mcp import Client

    await start_kernel(jp_fetch, "work.ipynb")
    token = jp_serverapp.identity_provider.token
    async with Client(_serve(jp_root_dir, server_url, token, "work.ipynb", "--approval", "auto"),
                      mode="legacy") as client:
        assert not (await client.call_tool("kernel_run", {"code": "kept = 1"})).is_error
        assert await _kernel_value(jp_serverapp, OWNERS) == "1"
    assert await _eventually(lambda: _kernel_value(jp_serverapp, OWNERS), "0")


async def _eventually(read, expected: str, seconds: float = 15.0) -> bool:
    """Whether ``read()`` gives ``expected`` within ``seconds`` (the release runs after the session ends)."""
    import asyncio
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await read() == expected:
            return True
        await asyncio.sleep(0.2)
    return False


async def _kernel_value(serverapp, code: str, *, stdout: bool = False) -> str:
    """What ``code`` gives in the kernel, run as the user would (its value, or what it printed)."""
    kernel_id = serverapp.kernel_manager.list_kernel_ids()[0]
    client = serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    out: list[str] = []

    def hook(msg):
        kind = msg["header"]["msg_type"]
        if kind == "execute_result" and not stdout:
            out.append(msg["content"]["data"]["text/plain"])
        elif kind == "stream" and stdout:
            out.append(msg["content"]["text"])

    try:
        await client.wait_for_ready(timeout=30)
        reply = await client.execute_interactive(code, output_hook=hook, store_history=False, timeout=30)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
    return "".join(out)
