"""Shared test setup: no test reads the developer's model settings or starts a real model by accident."""

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
