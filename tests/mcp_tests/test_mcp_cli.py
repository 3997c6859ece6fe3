"""``nbagent mcp list``: servers from the user's config file started and listed, names escaped."""

from __future__ import annotations

import json

import pytest

from nbagent.cli.app import main

from .conftest import toy_stdio

pytestmark = pytest.mark.integration


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
