"""Kernel tools for outside agents: ``nbagent mcp serve --kernel`` against a running kernel of a real
Jupyter server, and the ``/nbagent/mcp`` route on the server's own kernels, driven by the SDK's client."""

from __future__ import annotations

import os
import sys

import pytest

from .live_helpers import start_kernel

pytest.importorskip("mcp")
pytestmark = [pytest.mark.kernel, pytest.mark.integration]


@pytest.fixture
def jp_server_config(model, request, monkeypatch):
    monkeypatch.setenv("NBAGENT_KERNEL_RUN_AUTO", "1")  # kernel_run runs in auto mode (read at the start)
    return {
        "ServerApp": {"jpserver_extensions": {"nbagent.jupyter.server": True}},
        "NbAgentServer": {"model_factory": lambda session_id: model, "idle_close_seconds": 0.2,
                          "mcp_approval": getattr(request, "param", "auto"),
                          "mcp_toolsets": ["notebook", "kernel"]},
    }


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


def _serve(jp_root_dir, server_url: str, token: str, kernel: str, *flags: str, env: dict | None = None):
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, env={**os.environ, "JUPYTER_TOKEN": token, **(env or {})},
        args=["-m", "nbagent.cli", "mcp", "serve", "--workspace", str(jp_root_dir), "--jupyter-url", server_url,
              "--kernel", kernel, *flags])


@pytest.fixture
def server_url(jp_fetch, jp_http_port, jp_base_url):
    return f"http://localhost:{jp_http_port}{jp_base_url}"


async def test_mcp_serve_runs_code_in_a_named_kernel(jp_fetch, jp_root_dir, server_url, jp_serverapp):
    from mcp import Client

    kernel_id = await start_kernel(jp_fetch, "work.ipynb")
    token = jp_serverapp.identity_provider.token
    params = _serve(jp_root_dir, server_url, token, "work.ipynb", "--approval", "auto")
    async with Client(params, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"kernel_variables", "kernel_inspect", "kernel_run"} <= set(tools)
        assert "kernel" not in tools["kernel_run"].input_schema["properties"]  # fixed at start
        run = await client.call_tool("kernel_run", {"code": "import os\nanswer = 6 * 7\nprint('hi')\nanswer"})
        assert not run.is_error, _text(run)
        assert "hi" in _text(run) and "42" in _text(run)
        listed = await client.call_tool("kernel_variables", {})
        assert "answer" in _text(listed) and "int" in _text(listed), _text(listed)
        inspected = await client.call_tool("kernel_inspect", {"name": "answer"})
        assert "42" in _text(inspected)
        for name in ("exit._ip.kernel.session.key", "get_ipython"):  # issue 26, finding 6: the kernel's own
            refused = await client.call_tool("kernel_inspect", {"name": name})
            assert refused.is_error and "hmac" not in _text(refused).lower(), _text(refused)
            assert "private" in _text(refused) or "kernel's own" in _text(refused), _text(refused)
        failed = await client.call_tool("kernel_run", {"code": "1 / 0"})
        assert failed.is_error and "ZeroDivisionError" in _text(failed)
        slow = await client.call_tool("kernel_run", {"code": "import time\nprint('start')\ntime.sleep(60)",
                                                     "timeout": 1})
        assert slow.is_error and "interrupted after 1 s" in _text(slow) and "KeyboardInterrupt" in _text(slow)
        again = await client.call_tool("kernel_run", {"code": "answer + 1"})  # the kernel lives on
        assert "43" in _text(again)
        count = await client.call_tool("kernel_run", {"code": "get_ipython().execution_count"})
        assert _text(count).endswith("value:\n1")  # no run counted as a cell of the user's (fresh kernel: 1)
    assert kernel_id


async def test_a_denied_kernel_run_does_not_run(jp_fetch, jp_root_dir, server_url, jp_serverapp):
    from mcp import Client

    kernel_id = await start_kernel(jp_fetch, "work.ipynb")
    token = jp_serverapp.identity_provider.token
    async with Client(_serve(jp_root_dir, server_url, token, kernel_id, "--approval", "read-only"),
                      mode="legacy") as client:
        denied = await client.call_tool("kernel_run", {"code": "touched = True"})
        assert denied.is_error and "denied by the nbagent user" in _text(denied)
        listed = await client.call_tool("kernel_variables", {})  # reading needs no approval
        assert not listed.is_error and "touched" not in _text(listed)


async def test_an_unknown_kernel_or_a_wrong_token_is_a_clear_error(jp_fetch, jp_root_dir, server_url,
                                                                  jp_serverapp):
    import asyncio
    import subprocess

    await start_kernel(jp_fetch, "work.ipynb")
    token = jp_serverapp.identity_provider.token
    for given, kernel, said in (("wrong", "work.ipynb", "check the token"),
                                (token, "nope.ipynb", "no running kernel is 'nope.ipynb'. Running: ")):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "nbagent.cli", "mcp", "serve", "--workspace", str(jp_root_dir),
            "--jupyter-url", server_url, "--kernel", kernel, "--jupyter-token", given,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = await proc.communicate()
        assert proc.returncode == 1 and said in err.decode(), err.decode()


async def _route(url: str, headers: dict, *steps):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            return [await step(client) for step in steps]


@pytest.fixture
def mcp_url(server_url):
    return server_url + "nbagent/mcp"


async def test_the_route_runs_code_in_a_kernel_of_the_server(jp_fetch, mcp_url, jp_auth_header):
    first = await start_kernel(jp_fetch, "a.ipynb")
    await start_kernel(jp_fetch, "b.ipynb")
    tools, unnamed, run, listed = await _route(
        mcp_url, jp_auth_header,
        lambda c: c.list_tools(),
        lambda c: c.call_tool("kernel_run", {"code": "1"}),
        lambda c: c.call_tool("kernel_run", {"code": "where = 'a'\nwhere * 2", "kernel": "a.ipynb"}),
        lambda c: c.call_tool("kernel_variables", {"kernel": first}))
    kernel_run = next(t for t in tools.tools if t.name == "kernel_run")
    assert "kernel" in kernel_run.input_schema["properties"]
    assert unnamed.is_error and "2 kernels run here" in _text(unnamed) and "a.ipynb" in _text(unnamed)
    assert not run.is_error and "'aa'" in _text(run), _text(run)
    assert "where" in _text(listed)


@pytest.mark.parametrize("jp_server_config", ["ask"], indirect=True)
async def test_the_route_denies_a_kernel_run_when_no_one_can_approve_it(jp_fetch, mcp_url, jp_auth_header):
    await start_kernel(jp_fetch, "a.ipynb")
    run, listed = await _route(
        mcp_url, jp_auth_header,
        lambda c: c.call_tool("kernel_run", {"code": "touched = 1"}),
        lambda c: c.call_tool("kernel_variables", {}))
    assert run.is_error and "denied by the nbagent user" in _text(run)
    assert not listed.is_error and "touched" not in _text(listed)



async def test_reading_a_busy_kernel_says_it_is_busy(jp_fetch, jp_serverapp):
    import asyncio

    from nbagent.errors import ToolError
    from nbagent.jupyter.remote.kernel_tools import kernel_toolset, server_kernels

    kernel_id = await start_kernel(jp_fetch, "a.ipynb")
    tools = {t.name: t for t in kernel_toolset(server_kernels(jp_serverapp), choose=True).tools}
    run = asyncio.ensure_future(tools["kernel_run"].fn(_Ctx(), code="import time\ntime.sleep(4)\n'slept'"))
    kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    for _ in range(2):  # the watcher's short line runs first; the second "busy" is the sleep
        while kernel.execution_state != "busy" and not run.done():
            await asyncio.sleep(0.02)  # the server's view of the kernel's state: no event to wait on here
        await asyncio.sleep(0.3)
    with pytest.raises(ToolError, match="is busy running other code"):
        await tools["kernel_variables"].fn(_Ctx())
    with pytest.raises(ToolError, match="did not queue behind it"):  # nor would it run later, unasked
        await tools["kernel_run"].fn(_Ctx(), code="late = 1")
    assert "'slept'" in await run  # the run itself was not disturbed
    assert "holds no user variables" in await tools["kernel_variables"].fn(_Ctx())  # idle again: read



async def test_two_calls_at_once_each_get_their_own_answer(jp_fetch, jp_serverapp):
    """Each call has its own kernel client and session: replies are never sent to the other one."""
    import asyncio

    from nbagent.jupyter.remote.kernel_tools import kernel_toolset, server_kernels

    await start_kernel(jp_fetch, "a.ipynb")
    tools = {t.name: t for t in kernel_toolset(server_kernels(jp_serverapp), choose=True).tools}
    first, second = await asyncio.wait_for(asyncio.gather(
        tools["kernel_run"].fn(_Ctx(), code="import time\ntime.sleep(0.5)\n'first'"),
        tools["kernel_run"].fn(_Ctx(), code="'second'")), 60)
    assert first == "value:\n'first'" and second == "value:\n'second'"


async def test_a_served_kernel_run_says_what_it_did_to_the_namespace(jp_fetch, jp_serverapp):
    """The watcher's lines around the call (nbagent.jupyter.kernel.watch) run in the kernel itself."""
    from nbagent.jupyter.remote.kernel_tools import kernel_toolset, server_kernels

    await start_kernel(jp_fetch, "a.ipynb")
    tools = {t.name: t for t in kernel_toolset(server_kernels(jp_serverapp), choose=True).tools}
    ctx = _Ctx()
    assert await tools["kernel_run"].fn(ctx, code="rows = [1]\ntmp = 'x'") == "ran: no output and no value\n\nkernel: + rows, + tmp"
    text = await tools["kernel_run"].fn(ctx, code="rows.append(2)\ndel tmp\nrows")
    assert text == "value:\n[1, 2]\n\nkernel: ~ rows (changed in place), - tmp"
    assert [(e.added, e.mutated, e.deleted) for e in ctx.events] == [(["rows", "tmp"], [], []), ([], ["rows"], ["tmp"])]
    count = await tools["kernel_run"].fn(ctx, code="get_ipython().execution_count")
    assert count == "value:\n1"  # the watcher's lines are not counted as cells either


class _Ctx:
    """What kernel_run's report reads of a tool context."""

    def __init__(self):
        self.events = []
        self.call_id, self.turn_id = "call_1", "turn_1"

    def emit(self, event):
        self.events.append(event)

    class config:
        output_limit = 30_000
