"""REST routes for attached context: a session's sources (the panel's chips) and the active notebook offer.

``GET  /nbagent/api/sessions/<id>/context`` lists what the session sees (name, kind, status, serial,
summary, error). ``POST /nbagent/api/sessions/<id>/context/notebook`` with ``{"path": "x.ipynb"}``
attaches, to that session, the saved notebook's last executed cells and their errors as the source
``notebook`` (the panel sends it before a prompt while a notebook is active); ``{"path": null}``
leaves it as it is. ``POST .../context/<name>/mute|unmute|remove`` are the chip's buttons.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...context.notebook_history import notebook_history
from ...context.records import NAME_RE, SourceError, parse_output
from ...context.store import ContextStore
from ...errors import StoreError, ToolError
from .handlers import SESSION, BaseHandler

NOTEBOOK_SOURCE = "notebook"
NOTEBOOK_WHY = "the notebook active in JupyterLab: its last executed cells and errors, offered by the side panel"
NOTEBOOK_MAX_BYTES = 50 * 1024 * 1024


def source_dict(source) -> dict[str, Any]:
    snap = source.snapshot
    return {"name": source.name, "kind": source.kind, "scope": "session" if source.scope else "workspace",
            "status": source.status, "serial": snap.serial if snap else 0, "summary": snap.summary if snap else "",
            "error": snap.error if snap else None, "fetched_at": snap.fetched_at if snap else None,
            "why": source.why, "wake": source.wake}


class _ContextHandler(BaseHandler):
    def context_store(self) -> ContextStore:
        store = self.app.services.store()
        if store.db is None:
            raise web.HTTPError(503, str(store.broken))
        return ContextStore(store.db)

    async def blocking(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.app.services.executor, fn, *args)

    def session(self, session_id: str) -> str:
        try:
            return self.app.services.store().resolve(session_id)
        except StoreError as exc:
            raise self.store_error(exc) from exc


class ContextListHandler(_ContextHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        def listing() -> list[dict[str, Any]]:
            return [source_dict(s) for s in self.context_store().sources(self.session(session_id))]

        self.reply({"session_id": session_id, "sources": await self.blocking(listing)})


class NotebookOfferHandler(_ContextHandler):
    @web.authenticated
    @authorized
    async def post(self, session_id: str) -> None:
        body = self.json_body()
        path = body.get("path") if isinstance(body, dict) else None
        if path is None:
            self.reply({"attached": False})
            return
        if not isinstance(path, str) or not path.endswith(".ipynb"):
            raise web.HTTPError(400, 'give {"path": "<notebook>.ipynb"} (relative to the workspace)')
        result = await self.blocking(self._offer, session_id, path)
        self.reply(result)

    def _offer(self, session_id: str, path: str) -> dict[str, Any]:
        session = self.session(session_id)
        store = self.context_store()
        if store.get(NOTEBOOK_SOURCE, session) is None and store.is_declined(session, NOTEBOOK_SOURCE):
            return {"attached": False, "reason": "declined"}
        nb = _read_notebook(self.app.services.workspace, path)
        text = notebook_history(nb, path)
        if not text:
            return {"attached": False, "reason": "no executed cells"}
        try:
            if store.get(NOTEBOOK_SOURCE, session) is None:
                store.attach(NOTEBOOK_SOURCE, "kernel", scope=session, why=NOTEBOOK_WHY, auto=True)
            status = store.push(NOTEBOOK_SOURCE, parse_output(text), session_id=session, kind="kernel")
        except SourceError as exc:
            raise web.HTTPError(400, str(exc).replace("%", "%%")) from exc
        return {"attached": True, "status": status, "source": source_dict(store.find(NOTEBOOK_SOURCE, session))}


class SourceActionHandler(_ContextHandler):
    @web.authenticated
    @authorized
    async def post(self, session_id: str, name: str, action: str) -> None:
        def act() -> dict[str, Any]:
            store, session = self.context_store(), self.session(session_id)
            try:
                if action == "remove":
                    return {"removed": store.remove(name, session).name}
                return {"source": source_dict(store.set_muted(name, session, action == "mute"))}
            except SourceError as exc:
                raise web.HTTPError(404, str(exc).replace("%", "%%")) from exc

        self.reply(await self.blocking(act))


def _read_notebook(workspace, path: str) -> dict[str, Any]:
    try:
        real = workspace.resolve(path)
    except ToolError as exc:
        raise web.HTTPError(400, str(exc).replace("%", "%%")) from exc
    try:
        info = os.stat(real)
    except FileNotFoundError:
        raise web.HTTPError(404, "no such notebook (is it saved?)") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > NOTEBOOK_MAX_BYTES:
        raise web.HTTPError(400, "not a regular notebook file, or over 50 MB")
    try:
        data = json.loads(real.read_bytes())
    except ValueError as exc:
        raise web.HTTPError(400, f"the notebook is not JSON: {exc}".replace("%", "%%")) from exc
    if not isinstance(data, dict):
        raise web.HTTPError(400, "the notebook is not a JSON object")
    return data


NAME = NAME_RE.pattern.strip("^$")
ROUTES = [
    (rf"/nbagent/api/sessions/{SESSION}/context/?", ContextListHandler),
    (rf"/nbagent/api/sessions/{SESSION}/context/notebook/?", NotebookOfferHandler),
    (rf"/nbagent/api/sessions/{SESSION}/context/(?P<name>{NAME})/(?P<action>mute|unmute|remove)/?",
     SourceActionHandler),
]
