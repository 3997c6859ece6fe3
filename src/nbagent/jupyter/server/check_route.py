"""``POST /nbagent/api/check``: the panel's Check button, the notebook check of nbagent.tools.nbcheck.

Body ``{"path": "x.ipynb", "timeout": seconds?}``; the answer is ``{"path", "clean", "text"}`` (the
report as the tool and ``nbagent check`` print it). A copy of the notebook, as the server holds it (its
live document when open), runs in a fresh kernel from a thread of its own; the user's kernel and the
file are not touched.
"""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...errors import ToolError
from .base import BaseHandler


class CheckHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        path = body.get("path") if isinstance(body, dict) else None
        timeout = body.get("timeout") if isinstance(body, dict) else None
        if not isinstance(path, str) or not path:
            raise web.HTTPError(400, 'give {"path": "<notebook>.ipynb"}')
        if timeout is not None and not isinstance(timeout, (int, float)):
            raise web.HTTPError(400, "timeout must be a number of seconds")
        services = self.app.services
        try:
            # Its own thread, not the services' executor: a check of minutes must not hold up the REST calls.
            report = await asyncio.to_thread(_check, services.workspace, path, timeout)
        except ToolError as exc:
            raise web.HTTPError(400, str(exc)) from exc
        self.reply({"path": report.name, "clean": report.clean, "text": report.text()})


def _check(workspace, path: str, timeout):
    from ...tools.nbcheck import check_path

    return check_path(workspace, path, timeout)


ROUTES = [(r"/nbagent/api/check/?", CheckHandler)]
