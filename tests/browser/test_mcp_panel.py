"""Outside agents' calls at /nbagent/mcp in a real JupyterLab: in ask mode the approval card appears in
the side panel, Approve lets the call through and Deny refuses it; the Settings tab lists the MCP servers."""

from __future__ import annotations

import asyncio
import json
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from .test_lab_panel import PANEL, panel  # noqa: E402,F401  (tests/browser is on sys.path; panel: a fixture)
from tests.paths import TOY_MCP_SERVER

pytest.importorskip("mcp")
pytestmark = [pytest.mark.browser, pytest.mark.integration]

TOY = TOY_MCP_SERVER


async def _edit(url: str, token: str, source: str) -> tuple[bool, str]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers={"Authorization": f"token {token}"}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            await client.call_tool("notebook_read", {"path": "shared.ipynb"})
            result = await client.call_tool("notebook_edit", {"path": "shared.ipynb", "cell_id": "setup",
                                                              "source": source})
    return result.is_error, "\n".join(block.text for block in result.content)


@pytest.fixture(scope="module")
def outside(lab):
    """``outside(source)``: an outside agent's notebook_edit at /nbagent/mcp, running in the background.
    Also writes the workspace's MCP servers, one with a hostile name."""
    (lab.root / ".nbagent").mkdir(exist_ok=True)
    (lab.root / ".nbagent" / "mcp.json").write_text(json.dumps({"mcpServers": {
        "toy": {"command": sys.executable, "args": [str(TOY)]},
        "odd<img src=x onerror=window.__pwned=1>": {"url": "http://127.0.0.1:9/<script>window.__pwned=2</script>"},
    }}))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="setup")]
    nbformat.write(nb, lab.root / "shared.ipynb")
    pool = ThreadPoolExecutor(1)

    def start(source: str) -> Future:
        return pool.submit(asyncio.run, _edit(f"{lab.url}/nbagent/mcp", lab.token, source))

    yield start
    pool.shutdown(wait=True)


def _source(lab) -> str:
    return nbformat.read(lab.root / "shared.ipynb", as_version=4).cells[0].source


def test_an_outside_call_asks_in_the_panel_and_approve_lets_it_through(panel, page, lab, outside, shot):
    call = outside("x = 2")
    card = page.locator(f"{PANEL} .jp-nbagent-approval.jp-mod-outside")
    card.wait_for()
    assert "An outside agent (over MCP) asks" in card.inner_text() and "notebook_edit" in card.inner_text()
    assert card.locator(".jp-nbagent-diff-add", has_text="x = 2").count() == 1
    assert not call.done() and _source(lab) == "x = 1"
    shot("mcp-01-outside-approval-card")
    card.locator("button", has_text="Approve").click()
    is_error, text = call.result(timeout=30)
    assert not is_error, text
    assert _source(lab) == "x = 2"
    card.wait_for(state="detached")


def test_deny_in_the_panel_refuses_the_call(panel, page, lab, outside):
    before = _source(lab)
    call = outside("import os")
    card = page.locator(f"{PANEL} .jp-nbagent-approval.jp-mod-outside")
    card.wait_for()
    card.locator("button", has_text="Deny").click()
    is_error, text = call.result(timeout=30)
    assert is_error and "denied by the nbagent user" in text
    assert _source(lab) == before
    card.wait_for(state="detached")


def test_the_settings_tab_lists_the_mcp_servers(panel, page, lab, outside, shot):  # outside: writes mcp.json
    page.locator(f"{PANEL} .jp-nbagent-new").click()  # a new session's agent reads the configuration
    page.locator(f"{PANEL} .jp-nbagent-tab[data-tab=settings]").click()
    servers = page.locator(f"{PANEL} .jp-nbagent-mcp-server")
    servers.first.wait_for()
    assert servers.count() == 2
    toy = servers.filter(has_text="toy")
    # a workspace server not approved on this machine is listed, never started (issue 26, finding 1)
    assert toy.locator(".jp-nbagent-mcp-status").inner_text() == "needs approval"
    assert "stdio · workspace · tool set off" in toy.locator(".jp-nbagent-mcp-meta").inner_text()
    odd = servers.filter(has_text="odd")
    assert "<img src=x" in odd.locator("b").inner_text() and odd.locator("img").count() == 0
    assert page.locator(f"{PANEL} .jp-nbagent-mcp script").count() == 0
    assert page.evaluate("window.__pwned") is None
    shot("mcp-02-settings-tab")
    page.locator(f"{PANEL} .jp-nbagent-tab[data-tab=chat]").click()
