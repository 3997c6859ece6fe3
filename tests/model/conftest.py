"""Fixtures for testing the scripted server with the real openai client."""

from __future__ import annotations

from typing import Any, Iterable

import pytest
from openai import AsyncOpenAI, OpenAI

from nbagent.testing.server import ScriptedServer


@pytest.fixture
def server():
    with ScriptedServer(chunk_size=4) as s:
        yield s


@pytest.fixture
def client(server: ScriptedServer):
    # max_retries=0: each scripted failure surfaces once instead of being retried by the SDK.
    with OpenAI(base_url=server.url, api_key="sk-test-abcdefgh1234", max_retries=0, timeout=10) as c:
        yield c


@pytest.fixture
async def aclient(server: ScriptedServer):
    async with AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=0, timeout=10) as c:
        yield c


@pytest.fixture
def assemble():
    return assemble_tool_calls


def assemble_tool_calls(deltas: Iterable[Any]) -> dict[int, dict[str, str]]:
    """Tool calls from `delta.tool_calls` entries, assembled by index the robust way: id and name
    from the first delta that has them, only `arguments` appended."""
    calls: dict[int, dict[str, str]] = {}
    for d in deltas:
        call = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
        call["id"] = call["id"] or (d.id or "")
        if d.function is not None:
            call["name"] = call["name"] or (d.function.name or "")
            call["arguments"] += d.function.arguments or ""
    return calls
