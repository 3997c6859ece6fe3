"""Where things are, for tests at any depth of tests/ (a ``parents[N]`` breaks when a folder moves)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
CHECKOUT = TESTS.parent
FIXTURES = TESTS / "fixtures"
TOY_MCP_SERVER = TESTS / "mcp" / "toy_server.py"  # a tiny MCP server, run over stdio or HTTP
EVAL_TASKS = TESTS / "evals" / "tasks"  # the harness's test tasks
