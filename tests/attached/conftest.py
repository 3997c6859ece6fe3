"""Fixtures for attached context: real agents on a ScriptedModel in a temporary workspace (real SQLite).

The shared ``make_agent`` (tests/conftest.py) makes them, with the poller off: tests drive polls themselves.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def agent_defaults():
    return {"context_poll": False}
