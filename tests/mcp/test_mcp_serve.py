"""``nbagent mcp serve`` driven by the SDK's own client: tools listed, a notebook read and edited by
cell id, writes denied by nbagent's approval mode, and the HTTP transport's bearer token."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from .conftest import free_port, wait_for_port

pytestmark = pytest.mark.integration


def _notebook(ws: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="intro"),
                nbformat.v4.new_code_cell("x = 1", id="setup")]
    path = ws / "analysis.ipynb"
    nbformat.write(nb, path)
    return path


def _stdio(ws: Path, *flags: str):
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "nbagent.cli", "mcp", "serve", "--workspace", str(ws), *flags])


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


@pytest.mark.process
async def test_list_read_and_edit_a_notebook_by_cell_id(tmp_path):
    from mcp import Client

    path = _notebook(tmp_path)
    async with Client(_stdio(tmp_path, "--approval", "auto"), mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {"notebook_read", "notebook_edit", "notebook_insert", "notebook_delete", "notebook_move",
                         "notebook_run", "notebook_check"}
        read = await client.call_tool("notebook_read", {"path": "analysis.ipynb"})
        assert not read.is_error and "setup" in _text(read) and "x = 1" in _text(read)
        edit = await client.call_tool("notebook_edit", {"path": "analysis.ipynb", "cell_id": "setup",
                                                        "source": "x = 42"})
        assert not edit.is_error, _text(edit)
    cells = {c.id: c.source for c in nbformat.read(path, as_version=4).cells}
    assert cells == {"intro": "# Title", "setup": "x = 42"}


@pytest.mark.process
@pytest.mark.parametrize("flags", [("--approval", "read-only"), ()], ids=["read-only", "ask-without-terminal"])
async def test_a_write_is_denied_on_nbagents_side(tmp_path, flags):
    from mcp import Client

    path = _notebook(tmp_path)
    before = path.read_bytes()
    async with Client(_stdio(tmp_path, *flags), mode="legacy") as client:
        await client.call_tool("notebook_read", {"path": "analysis.ipynb"})
        edit = await client.call_tool("notebook_edit", {"path": "analysis.ipynb", "cell_id": "setup",
                                                        "source": "import os; os.remove('x')"})
        assert edit.is_error and "denied by the nbagent user" in _text(edit)
        assert not (await client.call_tool("notebook_read", {"path": "analysis.ipynb"})).is_error
    assert path.read_bytes() == before


@pytest.mark.process
async def test_outside_the_workspace_is_refused(tmp_path):
    from mcp import Client

    _notebook(tmp_path)
    async with Client(_stdio(tmp_path, "--approval", "auto", "--toolsets", "notebook,core"),
                      mode="legacy") as client:
        result = await client.call_tool("read_file", {"path": "/etc/passwd"})
        assert result.is_error and "outside" in _text(result)


@pytest.mark.process
async def test_streamable_http_needs_the_token(tmp_path):
    from mcp import Client, MCPError
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    _notebook(tmp_path)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nbagent.cli", "mcp", "serve", "--workspace", str(tmp_path),
                             "--http", "--port", str(port), "--token", "s3cret", "--approval", "auto"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        async with create_mcp_http_client(headers={"Authorization": "Bearer s3cret"}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                read = await client.call_tool("notebook_read", {"path": "analysis.ipynb"})
                assert "x = 1" in _text(read)
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            request = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json",
                                                                      **headers})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401
        with pytest.raises(BaseException) as caught:  # the SDK's client surfaces it as an error response
            async with create_mcp_http_client(headers={"Authorization": "Bearer wrong"}) as http:
                async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                    await client.list_tools()
        assert caught.group_contains(MCPError) if isinstance(caught.value, BaseExceptionGroup) \
            else isinstance(caught.value, MCPError)
    finally:
        proc.terminate()
        proc.wait(10)


def test_serving_leaves_the_tool_sets_it_was_given_as_they_were(tmp_path):
    from nbagent.mcp_server.serve import ServedTools
    from nbagent.tools.base import ToolSet, function_tool

    def ping() -> str:
        """Answer pong."""
        return "pong"

    shared = ToolSet("kernel", [function_tool(ping)], always_on=True)  # used by other registries too
    served = ServedTools(tmp_path, toolsets=("notebook", "kernel"), extra=[shared])
    names = {t.name for t in served.tools()}
    assert "ping" in names and "bash" not in names  # "core" is not served unless named
    assert shared.always_on is True
