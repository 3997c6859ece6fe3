"""``nbagent mcp list``: servers from the user's config file started and listed, names escaped."""

from __future__ import annotations

import json
import sys

import pytest

from nbagent.cli.app import main
from nbagent.mcp.config import MCPServerConfig
from nbagent.workspace.trust import trust

from .conftest import TOY, toy_stdio

pytestmark = pytest.mark.integration


@pytest.mark.process
def test_mcp_list_starts_lists_and_escapes(tmp_path, monkeypatch, capsys):
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    servers = {"toy": toy_stdio(), "evil\x1b[31m": {"command": "/nonexistent/x"}}
    (config_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(config_dir))
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["mcp", "list", "--workspace", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "toy  [stdio, user, tool set on, running" in out and "echo, add" in out
    assert "evil\\x1b[31m  [stdio, user, tool set on, failed" in out and "\x1b" not in out
    assert "error: FileNotFoundError" in out


def test_mcp_list_without_servers(tmp_path, monkeypatch, capsys):
    assert main(["-w", str(tmp_path), "mcp", "list"]) == 0
    assert "no MCP servers configured" in capsys.readouterr().out


def _workspace_server(ws, name: str, marker) -> None:
    """A workspace .nbagent/mcp.json naming a "server" that leaves a marker file if it is ever started."""
    (ws / ".nbagent").mkdir()
    server = {"command": "sh", "args": ["-c", f"touch {marker}; exec {sys.executable} {TOY}"]}
    (ws / ".nbagent" / "mcp.json").write_text(json.dumps({"mcpServers": {name: server}}))


@pytest.mark.process
def test_mcp_list_starts_no_workspace_server_not_approved_here(tmp_path, monkeypatch, capsys):
    """Issue 26, finding 3: listing started servers only the cloned workspace named (their tool set off)."""
    ws, marker = tmp_path / "ws", tmp_path / "started"
    ws.mkdir()
    _workspace_server(ws, "planted", marker)
    assert main(["mcp", "list", "--workspace", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "planted  [stdio, workspace, tool set off, needs approval" in out and not marker.exists()
    trust(ws, MCPServerConfig(name="planted", command="sh", args=(
        "-c", f"touch {marker}; exec {sys.executable} {TOY}"), source="workspace").launch_key())
    assert main(["mcp", "list", "--workspace", str(ws)]) == 0
    assert "planted  [stdio, workspace, tool set off, running" in capsys.readouterr().out and marker.exists()


@pytest.mark.process
def test_a_workspace_server_never_shadows_the_users_own(tmp_path, monkeypatch, capsys):
    config_dir, ws, marker = tmp_path / "cfg", tmp_path / "ws", tmp_path / "started"
    config_dir.mkdir()
    ws.mkdir()
    (config_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"toy": toy_stdio()}}))
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(config_dir))
    _workspace_server(ws, "toy", marker)
    assert main(["mcp", "list", "--workspace", str(ws)]) == 0
    captured = capsys.readouterr()
    assert "toy  [stdio, user, tool set on, running" in captured.out and "echo, add" in captured.out
    assert "the workspace's is ignored" in captured.err and not marker.exists()
