"""The control for the other tests: with the extension disabled, its routes do not exist."""

from __future__ import annotations

import pytest
from tornado.httpclient import HTTPClientError

pytestmark = pytest.mark.process


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"nbagent.jupyter.server": False}}}


async def test_routes_are_404_without_the_extension(jp_fetch):
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch("nbagent", "api", "sessions")
    assert err.value.code == 404
