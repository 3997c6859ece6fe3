"""A real Jupyter server (pytest-jupyter) with the nbagent extension and a scripted model."""

from __future__ import annotations

import asyncio
import json

import pytest
import pytest_asyncio
from pytest_jupyter.jupyter_core import *  # noqa: F401,F403  (jp_environ and friends)
from pytest_jupyter.jupyter_server import *  # noqa: F401,F403  (jp_fetch, jp_ws_fetch, ...)

from nbagent.testing.scripted import ScriptedModel

# pytest-jupyter's own way of running async tests (these two hooks) would fight pytest-asyncio,
# which runs every async test here (asyncio_mode=auto): keep the fixtures, drop the hooks, and
# start the server on the loop pytest-asyncio runs the test on.
del pytest_pycollect_makeitem, pytest_pyfunc_call  # noqa: F821


@pytest_asyncio.fixture
async def jp_asyncio_loop():
    yield asyncio.get_running_loop()

EXT = "nbagent.jupyter.server"


@pytest.fixture
def model():
    """The scripted model every agent of the test server plays (one turn at a time)."""
    return ScriptedModel(chunk_size=4)


@pytest.fixture
def jp_server_config(model):
    return {
        "ServerApp": {"jpserver_extensions": {EXT: True}},
        "NbAgentServer": {"model_factory": lambda session_id: model, "idle_close_seconds": 0.2,
                          "agent_options": {"memory": True}},
    }


@pytest.fixture
def api(jp_fetch):
    """JSON in, JSON out: ``await api("GET", "sessions")``."""

    async def call(method: str, *path: str, body=None, **kwargs):
        if body is not None:
            kwargs["body"] = json.dumps(body)
        elif method in ("POST", "PUT"):
            kwargs["body"] = "{}"
        response = await jp_fetch("nbagent", "api", *path, method=method, **kwargs)
        return json.loads(response.body) if response.body else None

    return call


@pytest.fixture
def connect(jp_ws_fetch):
    """Open a session's WebSocket; returns a Client that reads events as dicts."""
    opened = []

    async def open_(session_id: str) -> "Client":
        ws = await jp_ws_fetch("nbagent", "api", "sessions", session_id, "ws")
        client = Client(ws)
        opened.append(client)
        return client

    yield open_
    for client in opened:
        client.ws.close()


class Client:
    """A test client: a frame may carry several events, one JSON object per line."""

    def __init__(self, ws):
        self.ws = ws
        self.seen: list[dict] = []
        self.inbox: list[dict] = []
        self.frames = 0

    async def send(self, **message) -> None:
        await self.ws.write_message(json.dumps(message))

    async def next(self, timeout: float = 10) -> dict:
        if not self.inbox:
            text = await asyncio.wait_for(self.ws.read_message(), timeout)
            assert text is not None, "the server closed the socket"
            self.frames += 1
            self.inbox = [json.loads(line) for line in text.split("\n")]
        event = self.inbox.pop(0)
        self.seen.append(event)
        return event

    async def until(self, kind: str, timeout: float = 10, **match) -> dict:
        """Read events up to the first of ``kind`` whose fields equal ``match``."""
        while True:
            event = await self.next(timeout)
            if event["type"] == kind and all(event.get(k) == v for k, v in match.items()):
                return event

    def types(self) -> list[str]:
        return [e["type"] for e in self.seen]
