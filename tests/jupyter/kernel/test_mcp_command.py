"""/mcp in a real InteractiveShell, and c.NbAgent.mcp_servers reaching the agent's configuration."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from IPython.utils.capture import capture_output

import nbagent.jupyter as nj
from tests.paths import TOY_MCP_SERVER

pytest.importorskip("mcp")
pytestmark = pytest.mark.integration

def run(shell, cell: str):
    with capture_output() as out:
        result = shell.run_cell(cell)
    return result, out.stdout + out.stderr


TOY = TOY_MCP_SERVER


@pytest.mark.process
def test_mcp_lists_servers_and_starts_them_on_request(shell, make_agent, monkeypatch, tmp_path):
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(tmp_path / "no-user-config"))
    agent = make_agent(mcp_servers={"toy": {"command": sys.executable, "args": [str(TOY)], "trust": "read"}})
    nj.use_agent(agent, shell)
    text = run(shell, "%agent /mcp")[1]
    assert "toy  [stdio, api, tool set on, stopped, trust *: read]" in text and "tools:" not in text
    text = run(shell, "%agent /mcp start")[1]
    assert "running" in text and "tools: echo, add" in text and "mcp__toy__echo" in agent.registry.names()
    result, _ = run(shell, "%agent /mcp frobnicate")
    assert not result.success and "/mcp takes no argument" in str(result.error_in_exec)


def test_traitlets_mcp_servers_reach_the_agent_settings():
    from traitlets.config import Config

    from nbagent.jupyter.kernel.config import NbAgent

    servers = {"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp"}}}
    config = Config()
    config.NbAgent.mcp_servers = servers
    assert NbAgent(config=config).agent_settings()["mcp_servers"] == servers
