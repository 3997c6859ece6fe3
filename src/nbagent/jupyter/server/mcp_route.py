"""``/nbagent/mcp``: nbagent's notebook tools over MCP (streamable HTTP) inside the Jupyter server.

An agent running elsewhere works on the notebooks open in JupyterLab: the served notebook tools
go through the server's notebook stores (the live document when a notebook is open). The route is
authenticated like the extension's other routes (a Jupyter token or login; Jupyter's authorizer
for the "nbagent" resource). Writes are gated by ``c.NbAgentServer.mcp_approval``: "ask" (the
default) asks in the JupyterLab panel's approval card (nbagent.jupyter.server.mcp_approvals), and
denies them, saying how to allow them, when no panel is open; "auto" runs them (kernel_run still
asks); "read-only" denies them. The served kernel tools run in this server's kernels.

The SDK's session manager is an ASGI application; ``_asgi_call`` hands it one tornado request.
It is written by hand because no maintained package runs an ASGI app inside a tornado handler,
and the part used here (one request, a streamed response, a disconnect) is small.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any, Sequence

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from .base import AUTH_RESOURCE
from .mcp_approvals import PanelApprover

class MCPRoute:
    """The served tools and the SDK's session manager, run for the server's lifetime on its loop."""

    def __init__(self, root: Path, *, approval: str, toolsets: tuple[str, ...], hub: Any,
                 approval_timeout: float, extra: Sequence[Any] = ()):
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from ...mcp_server.serve import ServedTools, SessionEnd, build_server

        self.approver = PanelApprover(hub, approval_timeout)
        hub.outside_decide = self.approver.resolve
        self.served = ServedTools(root, toolsets=toolsets, approval=approval, approver=self.approver.ask,
                                  on_event=self.approver.on_event, deny_note=self.approver.deny_note, extra=extra)
        self.manager = StreamableHTTPSessionManager(app=build_server(self.served), json_response=True)
        self.app = SessionEnd(self.manager.handle_request, self.served)
        """The manager's requests; a DELETE that ends a session releases its records in the kernels."""
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._started: asyncio.Future | None = None

    async def ensure_started(self) -> None:
        """Start the session manager on the server's loop at the first request; later ones just wait."""
        if self._started is None:
            self._started = asyncio.get_running_loop().create_future()
            self._task = asyncio.ensure_future(self._run(self._started))
        await asyncio.shield(self._started)

    async def _run(self, started: asyncio.Future) -> None:
        async with self.manager.run():
            started.set_result(None)
            await self._stop.wait()

    async def stop(self) -> None:
        await self.served.end_all()  # bounded (SESSION_END_TIMEOUT): the sessions end with the server
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5)


class MCPHandler(ExtensionHandlerMixin, APIHandler):
    """GET, POST and DELETE of the streamable HTTP transport, for a logged-in user only."""

    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._serve()

    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self._serve()

    @web.authenticated
    @authorized
    async def delete(self) -> None:
        await self._serve()

    def on_connection_close(self) -> None:
        self._gone.set()

    @property
    def _gone(self) -> asyncio.Event:
        if not hasattr(self, "_gone_event"):
            self._gone_event = asyncio.Event()
        return self._gone_event

    async def _serve(self) -> None:
        route: MCPRoute | None = getattr(self.extensionapp, "mcp_route", None)
        if route is None:
            raise web.HTTPError(503, "the MCP route is off (the mcp package is not installed)")
        await route.ensure_started()
        await _asgi_call(self, route.app)


async def _asgi_call(handler: Any, app: Any) -> None:
    """Run one request of ``handler`` (tornado) through the ASGI ``app``, streaming its response."""
    request = handler.request
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
        "scheme": request.protocol, "path": "/mcp", "raw_path": b"/mcp", "root_path": "",
        "query_string": (request.query or "").encode("latin-1"),
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.get_all()],
        "client": (request.remote_ip, 0), "server": (request.host_name, 0),
    }
    sent_body = False

    async def receive() -> dict:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": request.body or b"", "more_body": False}
        await handler._gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            handler.set_status(message["status"])
            handler.clear_header("Content-Type")
            for key, value in message.get("headers") or []:
                handler.add_header(key.decode("latin-1"), value.decode("latin-1"))
        elif message["type"] == "http.response.body":
            body = message.get("body") or b""
            if body:
                handler.write(body)
            if message.get("more_body"):
                await handler.flush()

    await app(scope, receive, send)
    if not handler._finished:
        handler.finish()


ROUTES: list[tuple[str, type[APIHandler]]] = [(r"/nbagent/mcp", MCPHandler)]


class MCPServersHandler(ExtensionHandlerMixin, APIHandler):
    """GET /nbagent/api/mcp[?session=<id>]: the MCP servers of that session's live agent (their status and
    tools as they are), else the ones the panel's agents would use (configuration and whether their tool
    set is on; nothing is started), for the panel's Settings tab."""

    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        import json

        from ...config import AgentConfig
        from ...errors import ConfigError
        from ...mcp import MCPManager
        from ...workspace.root import Workspace

        app: Any = self.extensionapp  # the NbAgentServer (typed as a plain ExtensionApp by the mixin)
        options = {**app.agent_options, **app.agent_settings.agent_options()}
        try:
            config = AgentConfig.load(workspace=app.services.root, toolsets=options.get("toolsets"),
                                      mcp_servers=options.get("mcp_servers"), persist=False)
            manager = MCPManager(config, Workspace(config.workspace))
        except ConfigError as exc:
            raise web.HTTPError(400, str(exc).replace("%", "%%")) from exc
        live = app.hub.live.get(self.get_query_argument("session", ""))
        servers = live.agent.mcp_status() if live is not None else manager.status()
        self.finish(json.dumps({"servers": servers, "problems": manager.problems}, default=str))


ROUTES.append((r"/nbagent/api/mcp", MCPServersHandler))
