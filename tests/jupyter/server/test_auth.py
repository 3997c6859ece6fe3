"""Without a token (or login cookie) every REST route and the WebSocket answer 403."""

from __future__ import annotations

import pytest
from tornado.httpclient import HTTPClientError

pytestmark = pytest.mark.process

NO_AUTH = {"Authorization": ""}

ROUTES = [
    ("GET", ("sessions",)),
    ("POST", ("sessions",)),
    ("GET", ("sessions", "{sid}")),
    ("DELETE", ("sessions", "{sid}")),
    ("POST", ("sessions", "{sid}", "fork")),
    ("GET", ("sessions", "{sid}", "messages")),
    ("GET", ("files",)),
    ("GET", ("memory",)),
    ("POST", ("memory", "forget")),
    ("GET", ("settings",)),
    ("PUT", ("settings",)),
]


async def test_rest_refuses_unauthenticated_requests(api, jp_fetch):
    sid = (await api("POST", "sessions"))["id"]
    for method, parts in ROUTES:
        path = [p.format(sid=sid) for p in parts]
        body = '{"text": "x", "approval": "auto"}' if method in ("POST", "PUT") else None
        with pytest.raises(HTTPClientError) as err:
            await jp_fetch("nbagent", "api", *path, method=method, body=body, headers=dict(NO_AUTH))
        assert err.value.code == 403, (method, path)
    # ...and none of them did anything.
    sessions = (await api("GET", "sessions"))["sessions"]
    assert [s["id"] for s in sessions] == [sid]
    assert (await api("GET", "settings"))["approval"] is None


async def test_websocket_refuses_unauthenticated_clients(api, jp_ws_fetch):
    sid = (await api("POST", "sessions"))["id"]
    with pytest.raises(HTTPClientError) as err:
        await jp_ws_fetch("nbagent", "api", "sessions", sid, "ws", headers=dict(NO_AUTH))
    assert err.value.code == 403


async def test_websocket_with_a_wrong_token_is_refused(api, jp_ws_fetch):
    sid = (await api("POST", "sessions"))["id"]
    with pytest.raises(HTTPClientError) as err:
        await jp_ws_fetch("nbagent", "api", "sessions", sid, "ws", headers={"Authorization": "token wrong"})
    assert err.value.code == 403


async def test_websocket_to_an_unknown_session_is_404(jp_ws_fetch):
    with pytest.raises(HTTPClientError) as err:
        await jp_ws_fetch("nbagent", "api", "sessions", "nosuchsession", "ws")
    assert err.value.code == 404
