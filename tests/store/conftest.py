"""Fixtures of the state tests: a real workspace directory and its real SQLite store."""

from __future__ import annotations

import pytest

from nbagent.store.sessions import SessionStore


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def store(workspace):
    s = SessionStore(workspace)
    yield s
    s.close()
