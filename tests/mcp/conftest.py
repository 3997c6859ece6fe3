"""MCP test helpers: the toy server's command, a toy server on streamable HTTP, and agent factories."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

TOY = Path(__file__).with_name("toy_server.py")


def toy_stdio(**extra) -> dict:
    return {"command": sys.executable, "args": [str(TOY)], **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)  # polling a port that is not open yet: there is no event to wait on
    raise TimeoutError(f"nothing listens on port {port}")


@pytest.fixture(scope="module")
def toy_http():
    """The toy server on streamable HTTP; yields its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(TOY), "http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(tmp_path_factory.mktemp("userconfig")))


@pytest.fixture
def make_agent(tmp_path):
    """Agent factory on a fresh workspace (a ScriptedModel answers); every agent is closed after."""
    from nbagent import Agent
    from nbagent.testing.scripted import ScriptedModel

    made = []

    def make(*replies, **kwargs):
        kwargs.setdefault("workspace", tmp_path)
        agent = Agent(model=ScriptedModel(replies), **kwargs)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()
