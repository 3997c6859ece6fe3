"""REST routes for attached context: a session's sources (the panel's chips) and the active notebook offer.

``GET  /nbagent/api/sessions/<id>/context`` lists what the session sees (name, kind, status, serial,
summary, error). ``POST /nbagent/api/sessions/<id>/context/notebook`` with ``{"path": "x.ipynb"}``
attaches, to that session, the saved notebook's last executed cells and their errors as the source
``notebook``; a prompt sent from the panel while a notebook is active does the same (the hub's
``before_prompt`` hook), from the live document when there is one. ``{"path": null}`` leaves it as it is. ``POST .../context/<name>/mute|unmute|remove`` are the chip's buttons.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...attached.notebook_history import notebook_history
from ...attached.records import NAME_RE, SourceError, parse_output
from ...attached.store import ContextStore
from ...errors import StoreError, ToolError
from ...render.redaction import logger
from ...workspace.safe_read import UnreadableFile, read_bytes
from .base import SESSION, BaseHandler

log = logger("nbagent.server")
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
    @property
    def nbapp(self) -> Any:
        """The nbagent server extension (typed loosely: jupyter_server types it as any ExtensionApp)."""
        return self.extensionapp

    def context_store(self) -> ContextStore:
        store = self.nbapp.services.store()
        if store.db is None:
            raise web.HTTPError(503, str(store.broken))
        return ContextStore(store.db, root=store.root)  # root: a stored command not approved here shows so

    async def blocking(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.nbapp.services.executor, fn, *args)

    def session(self, session_id: str) -> str:
        try:
            return self.nbapp.services.store().resolve(session_id)
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
        try:
            self.reply(await offer_notebook(self.nbapp, session_id, path))
        except StoreError as exc:
            raise self.store_error(exc) from exc
        except (SourceError, ToolError) as exc:
            missing = "no such notebook" in str(exc)
            raise web.HTTPError(404 if missing else 400, str(exc).replace("%", "%%")) from exc


async def offer_notebook(app: Any, session_id: str, path: str) -> dict[str, Any]:
    """Attach (or refresh) the session's ``notebook`` source from the document as it is now: the live
    shared document or open tab when there is one, else the saved file. Declined sessions are left alone."""
    loop = asyncio.get_running_loop()
    nb = await _document(app, path)
    return await loop.run_in_executor(app.services.executor, _record_offer, app, session_id, path, nb)


async def offer_for_prompt(app: Any, session_id: str, context: Any) -> None:
    """The hub's hook: a prompt sent while a notebook is active brings that notebook's history along."""
    if context is None or not getattr(context, "notebook", None) or not context.notebook.endswith(".ipynb"):
        return
    try:
        await offer_notebook(app, session_id, context.notebook)
    except Exception as exc:  # the prompt matters more than its context
        log.info("nbagent: notebook %s not offered as context: %s", context.notebook, exc)


async def _document(app: Any, path: str) -> dict[str, Any]:
    workspace = app.services.workspace
    real = workspace.resolve(path)  # ToolError outside the workspace
    notebooks = getattr(app, "notebooks", None)
    if notebooks is not None:
        rel = workspace.rel(real)
        snapshot = await notebooks.aread(rel, real, rel)
        return snapshot.notebook
    return await asyncio.get_running_loop().run_in_executor(app.services.executor, _read_notebook, workspace, path)


def _record_offer(app: Any, session_id: str, path: str, nb: dict[str, Any]) -> dict[str, Any]:
    sessions = app.services.store()
    if sessions.db is None:
        raise StoreError(str(sessions.broken))
    session = sessions.resolve(session_id)
    store = ContextStore(sessions.db)
    if store.get(NOTEBOOK_SOURCE, session) is None and store.is_declined(session, NOTEBOOK_SOURCE):
        return {"attached": False, "reason": "declined"}
    text = notebook_history(nb, path)
    if not text:
        return {"attached": False, "reason": "no executed cells"}
    if store.get(NOTEBOOK_SOURCE, session) is None:
        store.attach(NOTEBOOK_SOURCE, "kernel", scope=session, why=NOTEBOOK_WHY, auto=True)
    status = store.push(NOTEBOOK_SOURCE, parse_output(text), session_id=session, kind="kernel")
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
    """The saved file (a server without the live-notebook store): a regular file, JSON, at most 50 MB,
    checked on the open file by the safe read (no check-then-open race)."""
    real = workspace.resolve(path)
    try:
        content, _ = read_bytes(real, shown=path, max_bytes=NOTEBOOK_MAX_BYTES)
    except FileNotFoundError:
        raise ToolError(f"{path}: no such notebook (is it saved?)") from None
    except UnreadableFile:
        raise ToolError(f"{path} is not a regular notebook file, or is over 50 MB") from None
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise ToolError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ToolError(f"{path} is not a JSON object")
    return data


NAME = NAME_RE.pattern.strip("^$")
ROUTES = [
    (rf"/nbagent/api/sessions/{SESSION}/context/?", ContextListHandler),
    (rf"/nbagent/api/sessions/{SESSION}/context/notebook/?", NotebookOfferHandler),
    (rf"/nbagent/api/sessions/{SESSION}/context/(?P<name>{NAME})/(?P<action>mute|unmute|remove)/?",
     SourceActionHandler),
]
