from __future__ import annotations

import pytest

from nbagent import Agent
from nbagent.testing.scripted import ScriptedModel


@pytest.fixture
def make_agent(tmp_path):
    """Agent factory on a fresh workspace; every agent made is closed after the test."""
    made = []

    def make(*replies, **kwargs):
        model = kwargs.pop("model", None) or ScriptedModel(replies)
        kwargs.setdefault("workspace", tmp_path)
        agent = Agent(model=model, **kwargs)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()
