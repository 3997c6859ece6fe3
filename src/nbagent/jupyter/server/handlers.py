"""REST handlers under /nbagent/api/ and the WebSocket of a session.

Every handler requires a logged-in user (``@web.authenticated`` and, for the
socket, ``@ws_authenticated``: 403 otherwise) and asks Jupyter's authorizer
for the "nbagent" resource; APIHandler applies Jupyter's XSRF rules to writes.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web, websocket

from ...errors import ConfigError, MissingSetting, StoreError
from ...workers import in_background
from .base import AUTH_RESOURCE, SESSION, BaseHandler, ServerParts, server_parts
from .settings import AVAILABLE

class SessionsHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        sessions = await self.app.services.list_sessions()
        for s in sessions:
            s["open"] = self.app.hub.is_open(s["id"])
            s["busy"] = self.app.hub.is_busy(s["id"])
        self.reply({"sessions": sessions})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.json_body()  # nothing to set yet; a malformed body is still an error
        self.reply(await self.app.services.create_session(), 201)


class SessionHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        try:
            self.reply(await self.app.services.session_info(session_id))
        except StoreError as exc:
            raise self.store_error(exc) from exc

    @web.authenticated
    @authorized
    async def delete(self, session_id: str) -> None:
        try:
            info = await self.app.services.session_info(session_id)
            await self.app.hub.close(info["id"])  # aborts its turn and closes its agent first
            await self.app.services.delete_session(info["id"])
        except StoreError as exc:
            raise self.store_error(exc) from exc
        # Its kernel undo records (kept for a resume) can go now; the answer does not wait for the kernels.
        in_background(self.app.notebooks.arelease_owner(info["id"]))
        self.set_status(204)
        self.finish()


class ForkHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self, session_id: str) -> None:
        body = self.json_body()
        turn = body.get("up_to_turn") if isinstance(body, dict) else None
        if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool)):
            raise web.HTTPError(400, "up_to_turn must be an integer")
        if self.app.hub.is_busy(session_id):
            raise web.HTTPError(409, "a turn is running in this session: wait for it or abort it first")
        try:
            self.reply(await self.app.services.fork_session(session_id, turn), 201)
        except StoreError as exc:
            raise self.store_error(exc) from exc


class MessagesHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        try:
            self.reply({"session_id": session_id, "messages": await self.app.services.messages(session_id)})
        except StoreError as exc:
            raise self.store_error(exc) from exc


class FilesHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        query = self.get_query_argument("q", "")
        try:
            limit = int(self.get_query_argument("limit", "20"))
        except ValueError as exc:
            raise web.HTTPError(400, "limit must be an integer") from exc
        limit = max(1, min(limit, 200))
        self.reply({"query": query, "files": await self.app.services.pick(query, limit)})


class MemoryHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """``entries`` (the fast path's list) and ``rows`` (every row with category, tags and counts)."""
        try:
            services = self.app.services
            self.reply({"entries": await services.memory_entries(), "rows": await services.memory_rows()})
        except StoreError as exc:
            raise self.store_error(exc) from exc


class MemorySearchHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        query = self.get_argument("q", "").strip()
        if not query:
            raise web.HTTPError(400, "give ?q=... : the words to search project memory for")
        try:
            k = max(1, min(int(self.get_argument("k", "10")), 50))
        except ValueError:
            raise web.HTTPError(400, "k must be a whole number") from None
        try:
            self.reply({"hits": await self.app.services.memory_search(query, k)})
        except StoreError as exc:
            raise self.store_error(exc) from exc


class ForgetHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        text = body.get("text") if isinstance(body, dict) else None
        entry_id = body.get("id") if isinstance(body, dict) else None
        if isinstance(entry_id, int) and not isinstance(entry_id, bool):
            try:
                self.reply({"removed": await self.app.services.forget_id(entry_id)})
            except StoreError as exc:
                raise self.store_error(exc) from exc
            return
        if not isinstance(text, str) or not text.strip():
            raise web.HTTPError(400, 'give {"text": ...} (the text, or part of it, of the entries to forget) '
                                     'or {"id": N}')
        try:
            self.reply({"removed": await self.app.services.forget(text)})
        except StoreError as exc:
            raise self.store_error(exc) from exc


class SettingsHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply({**self.app.agent_settings.to_dict(), "available": AVAILABLE})

    @web.authenticated
    @authorized
    async def put(self) -> None:
        try:
            settings = await self.app.update_settings(self.json_body())
        except ConfigError as exc:
            raise web.HTTPError(400, str(exc).replace("%", "%%")) from exc
        self.reply({**settings.to_dict(), "available": AVAILABLE})


class ModelsHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """``models`` (configured names first, then the endpoint's), ``endpoint`` and ``problem`` (why the
        endpoint listed none)."""
        self.reply(await self.app.model_choices())


class SessionSocket(ExtensionHandlerMixin, JupyterHandler, websocket.WebSocketHandler):
    """One client of one session: its messages go to the hub, the session's events come back."""

    auth_resource = AUTH_RESOURCE
    session_id: str = ""

    @property
    def app(self) -> ServerParts:
        return server_parts(self)

    async def pre_get(self) -> None:
        authorized_ = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "execute", AUTH_RESOURCE))
        if not authorized_:
            raise web.HTTPError(403)

    @ws_authenticated
    async def get(self, session_id: str) -> None:
        await self.pre_get()
        try:  # an unknown session is a 404 before the upgrade, not a socket that closes at once
            self.session_id = (await self.app.services.session_info(session_id))["id"]
        except StoreError as exc:
            raise web.HTTPError(404, str(exc).replace("%", "%%")) from exc
        result = super().get(session_id)
        if result is not None:
            await result

    async def open(self, session_id: str) -> None:  # type: ignore[override]
        try:
            await self.app.hub.attach(self.session_id, self)
        except Exception as exc:  # the agent cannot start (no model configured, ...): say why
            self.log.warning("nbagent: cannot open session %s: %s", self.session_id, exc)
            message = (exc.worded(f"choose a {exc.setting} in nbagent's settings (JupyterLab's Settings Editor)")
                       if isinstance(exc, MissingSetting) else str(exc))  # in the panel's words
            self.send_text(json.dumps({"type": "error", "turn_id": "", "message": message,
                                       "kind": "config", "status_code": None}))
            self.close(1011, "the agent could not start")

    async def on_message(self, message: str | bytes) -> None:
        try:
            data = json.loads(message)
        except ValueError:
            data = None
        error = await self.app.hub.handle(self.session_id, data)
        if error is not None:
            self.send_text(json.dumps(error))

    def on_close(self) -> None:
        self.app.hub.detach(self.session_id, self)

    def send_text(self, text: str) -> None:
        if self.ws_connection is None or self.ws_connection.is_closing():
            return
        try:
            self.write_message(text)
        except websocket.WebSocketClosedError:
            pass  # the peer went away; on_close detaches it


ROUTES = [
    (r"/nbagent/api/sessions/?", SessionsHandler),
    (rf"/nbagent/api/sessions/{SESSION}/?", SessionHandler),
    (rf"/nbagent/api/sessions/{SESSION}/fork/?", ForkHandler),
    (rf"/nbagent/api/sessions/{SESSION}/messages/?", MessagesHandler),
    (rf"/nbagent/api/sessions/{SESSION}/ws", SessionSocket),
    (r"/nbagent/api/files/?", FilesHandler),
    (r"/nbagent/api/memory/?", MemoryHandler),
    (r"/nbagent/api/memory/forget/?", ForgetHandler),
    (r"/nbagent/api/memory/search/?", MemorySearchHandler),
    (r"/nbagent/api/settings/?", SettingsHandler),
    (r"/nbagent/api/models/?", ModelsHandler),
]
