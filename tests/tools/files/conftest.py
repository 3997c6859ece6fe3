"""Fixtures for the workspace, file and search tool tests: a real workspace in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from .files_helpers import make_ctx
from nbagent.tools.context import ToolContext


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return make_ctx(root)
