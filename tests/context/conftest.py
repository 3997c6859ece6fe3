"""Fixtures for attached context: real agents on a ScriptedModel in a temporary workspace (real SQLite)."""

from __future__ import annotations

import pytest

from nbagent import Agent
from nbagent.testing.scripted import ScriptedModel


@pytest.fixture
def make_agent(tmp_path):
    """Agent factory on a fresh workspace, poller off (tests drive polls themselves); closed after the test."""
    made = []

    def make(*replies, **kwargs):
        model = kwargs.pop("model", None) or ScriptedModel(replies, default=None)
        kwargs.setdefault("workspace", tmp_path)
        kwargs.setdefault("context_poll", False)
        agent = Agent(model=model, **kwargs)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()
