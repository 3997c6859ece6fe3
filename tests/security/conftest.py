"""Fixtures of the security tests: a fresh workspace and an agent factory on it."""

from __future__ import annotations

import pytest

from nbagent import Agent
from nbagent.config import AgentConfig
from nbagent.procs import ProcessTracker
from nbagent.testing.scripted import ScriptedModel
from nbagent.tools.context import ToolContext
from nbagent.workspace import Workspace


@pytest.fixture
def make_agent(tmp_path):
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


@pytest.fixture
def ctx(tmp_path):
    events: list = []
    context = ToolContext(workspace=Workspace(tmp_path), config=AgentConfig.load(workspace=tmp_path),
                          emit=events.append, processes=ProcessTracker())
    context.extras["events"] = events
    yield context
    context.processes.kill_all()
