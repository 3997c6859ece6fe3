"""Fixtures for the kernel front end: a real InteractiveShell with the extension loaded, real agents
on a ScriptedModel in a temporary workspace, and widget comms that record what they send."""

from __future__ import annotations

import time

import comm
import pytest
from comm.base_comm import BaseComm



class RecordingComm(BaseComm):
    """A comm that keeps every message a widget sends to the frontend (instead of a kernel socket)."""

    sent: list[dict] = []

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        RecordingComm.sent.append({"msg_type": msg_type, "data": data, "at": time.monotonic()})


@pytest.fixture
def recorded(monkeypatch):
    """Messages sent by widgets made during the test."""
    RecordingComm.sent = []
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))
    return RecordingComm.sent


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "NBAGENT_MODEL", "NBAGENT_VIEW"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


@pytest.fixture
def agent_workspace(workspace):
    return workspace


@pytest.fixture
def agent_defaults():
    return {"approval": "auto"}


@pytest.fixture
def shell(workspace):
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "nbagent")
    yield sh
    sh.run_line_magic("unload_ext", "nbagent")
    InteractiveShell.clear_instance()


@pytest.fixture
def wait_for():
    return _wait_for


def _wait_for(predicate, timeout: float = 30.0, interval: float = 0.01):
    """Poll until ``predicate()`` is truthy (the agent works on its own thread)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {predicate}")
