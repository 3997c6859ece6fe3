"""Shared test setup: no test reads the developer's model settings or starts a real model by accident;
one ``make_agent`` factory for every folder (a folder may override ``agent_workspace`` and
``agent_defaults``)."""

from __future__ import annotations

import pytest

_MODEL_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "NBAGENT_MODEL", "NBAGENT_API", "NBAGENT_TOOLSETS",
              "NBAGENT_APPROVAL", "NBAGENT_MAX_STEPS", "NBAGENT_MEMORY", "NBAGENT_WORKSPACE",
              "NBAGENT_PERSIST", "NBAGENT_COMPACT_THRESHOLD", "NBAGENT_OUTPUT_LIMIT")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch):
    for name in _MODEL_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NBAGENT_LOCAL", "off")
    yield


@pytest.fixture
def agent_workspace(tmp_path):
    """The workspace ``make_agent``'s agents work on."""
    return tmp_path


@pytest.fixture
def agent_defaults():
    """Options every agent made by ``make_agent`` gets unless the test gives its own."""
    return {}


@pytest.fixture
def make_agent(agent_workspace, agent_defaults):
    """``make_agent(*replies, **options)``: an Agent with a ScriptedModel of ``replies`` (or ``model=``);
    every agent made is closed after the test."""
    from nbagent.testing import agent_factory

    make, close_all = agent_factory(agent_workspace, **agent_defaults)
    yield make
    close_all()


import os  # noqa: E402  (kept beside the one statement that needs them)
import tempfile  # noqa: E402

# No test (nor a kernel or CLI it starts) reads or writes the developer's own config folder: the trust
# record of approved commands (nbagent.workspace.trust), mcp.json and the global instructions live there.
os.environ["NBAGENT_CONFIG_DIR"] = tempfile.mkdtemp(prefix="nbagent-tests-config-")
