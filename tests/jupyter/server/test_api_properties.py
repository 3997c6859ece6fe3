"""Property tests of the REST and WebSocket API with malformed and hostile payloads: never a 500, the hub
keeps working, and a refused request changes nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tornado.httpclient import HTTPClientError

pytestmark = pytest.mark.process

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
HOSTILE_TEXT = st.sampled_from(["../../etc/passwd", "\x00", "\x1b[31mred", "<script>alert(1)</script>",
                                "%s%s%n", "' OR 1=1 --", "\ud800", "a" * 5000, "/" * 300, "${HOME}"])
TEXT = st.text(max_size=60) | HOSTILE_TEXT
KEYS = st.sampled_from(["approval", "toolsets", "model", "max_steps", "memory", "type", "text", "call_id",
                        "decision", "id", "q", "title", "origin", "workspace", "session", "cell_ids"])
OBJECTS = st.dictionaries(KEYS | st.text(max_size=8), JSON | TEXT, max_size=5)
BODIES = OBJECTS.map(json.dumps) | JSON.map(json.dumps) | TEXT
SOCKET_TYPES = st.sampled_from(["approval", "stop", "abort", "undo", "redo", "prompt", "settings", "", "snapshot"])
SOCKET_MESSAGES = st.builds(lambda kind, rest: json.dumps({**rest, "type": kind}), SOCKET_TYPES | TEXT, OBJECTS)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _raw(text: str) -> bytes:
    """The body as bytes; a lone surrogate becomes invalid UTF-8, as a hostile client could send."""
    return text.encode("utf-8", "surrogatepass")


def _printable(text: str) -> str:
    """URLs cannot carry lone surrogates at all: replaced, the rest of the text kept."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


async def _status(jp_fetch, method: str, *path: str, body: str | None = None, params=None) -> int:
    try:
        response = await jp_fetch("nbagent", "api", *map(_printable, path), method=method,
                                  body=None if body is None else _raw(body),
                                  params={k: _printable(v) for k, v in (params or {}).items()})
    except HTTPClientError as exc:
        return exc.code
    return response.code


async def _json(jp_fetch, *path: str):
    return json.loads((await jp_fetch("nbagent", "api", *path)).body)


@pytest.mark.parametrize("method, route", [("PUT", "settings"), ("POST", "sessions")])
@SETTINGS
@given(body=BODIES)
async def test_writes_never_500_and_refusals_change_nothing(jp_fetch, method, route, body):
    before = await _json(jp_fetch, route)
    code = await _status(jp_fetch, method, route, body=body)
    assert code < 500, (code, body)
    if code >= 400:
        assert await _json(jp_fetch, route) == before


@SETTINGS
@given(session=TEXT, query=TEXT, body=BODIES)
async def test_other_routes_never_500(jp_fetch, session, query, body):
    safe = session.replace("/", "_").replace("?", "_").replace("#", "_") or "x"
    assert await _status(jp_fetch, "GET", "sessions", safe) < 500
    assert await _status(jp_fetch, "GET", "files", params={"q": query}) < 500
    assert await _status(jp_fetch, "GET", "memory", "search", params={"q": query}) < 500
    assert await _status(jp_fetch, "POST", "memory", "forget", body=body) < 500
    assert await _status(jp_fetch, "DELETE", "sessions", safe) < 500


@SETTINGS
@given(messages=st.lists(SOCKET_MESSAGES | OBJECTS.map(json.dumps) | JSON.map(json.dumps) | TEXT, min_size=1,
                         max_size=6))
async def test_the_socket_survives_hostile_messages(api, connect, model, messages):
    session = await api("POST", "sessions")
    client = await connect(session["id"])
    assert (await client.next())["type"] == "snapshot"
    for message in messages:
        try:
            data = json.loads(message)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("type") == "prompt":
            continue  # a valid prompt would start a turn the scripted model has no answer for
        await client.ws.write_message(_printable(message))
    model.enqueue("still here")
    await client.send(type="prompt", text="are you there?")
    end = await client.until("turn_end", timeout=20)
    assert end["reason"] == "done" and end["text"] == "still here"
