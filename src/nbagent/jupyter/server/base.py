"""What every handler of the extension shares: the auth resource, the session pattern, the JSON base handler.

Handlers see the extension application through ``ServerParts``, the few parts they use, so that no
handler module imports the application that lists them (nbagent.jupyter.server.app).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, cast

from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from ...errors import StoreError

if TYPE_CHECKING:
    from .completions import CompletionService
    from .hub import SessionHub
    from .notebooks import ServerNotebooks
    from .services import WorkspaceServices
    from .settings import ServerSettings


class ServerParts(Protocol):
    """The parts of the extension application (NbAgentServer) that handlers use."""

    hub: "SessionHub"
    services: "WorkspaceServices"
    notebooks: "ServerNotebooks"
    agent_settings: "ServerSettings"
    completions: "CompletionService"

    async def update_settings(self, changes: Any) -> "ServerSettings": ...

    async def model_choices(self) -> dict[str, Any]: ...


def server_parts(handler: ExtensionHandlerMixin) -> ServerParts:
    """The handler's extension application, typed by the parts handlers use."""
    return cast(ServerParts, handler.extensionapp)


AUTH_RESOURCE = "nbagent"
SESSION = r"(?P<session_id>[0-9a-zA-Z]{1,64})"


class BaseHandler(ExtensionHandlerMixin, APIHandler):
    auth_resource = AUTH_RESOURCE

    @property
    def app(self) -> ServerParts:
        return server_parts(self)

    def json_body(self) -> Any:
        if not self.request.body:
            return {}
        try:
            return json.loads(self.request.body)
        except ValueError as exc:
            raise web.HTTPError(400, f"the body is not JSON: {exc}") from exc

    def reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data, default=str))

    def store_error(self, exc: StoreError) -> web.HTTPError:
        status = 404 if str(exc).startswith("no session") else 400
        return web.HTTPError(status, str(exc).replace("%", "%%"))
