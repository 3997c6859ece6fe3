"""Fixtures for the shell, task and git tools: a real workspace, a real tracker, real processes."""

from __future__ import annotations

import pytest

from nbagent.config import AgentConfig
from nbagent.procs import ProcessTracker
from nbagent.tools.context import ToolContext
from nbagent.tools.tasks import TaskManager
from nbagent.workspace import Workspace


@pytest.fixture
def ctx(tmp_path):
    events: list = []
    context = ToolContext(workspace=Workspace(tmp_path), config=AgentConfig.load(workspace=tmp_path),
                          emit=events.append, processes=ProcessTracker())
    context.extras["events"] = events
    yield context
    context.processes.kill_all()
    TaskManager.for_workspace(context.workspace).stop_all()
