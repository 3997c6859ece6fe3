"""``/nbagent/api/changes``: the review of turns' changes, row by row (docs/notebooks.md, "Reviewing a turn").

- ``GET  /nbagent/api/changes?path=P``: every session's turns with rows of P still awaiting review (the
  panel's agents and a kernel's ``%agent`` alike), oldest first; ``?session=S[&turn=N]``: that session's
  newest (or N-th) turn. Both answer ``{"turns": [{"session", "turn", "rows": [...]}]}``.
- ``POST /nbagent/api/changes/undo|redo|keep`` with ``{"session", "turn", "only": [ids|paths|cell ids] | null}``.

A session open in this server is reviewed through its agent (its history gets the note, its tabs the
``checkpoint`` event); any other (a kernel's, a closed one) here, from its checkpoints and the
database. Either way the files and the open notebooks' live documents or views are written (through the
server's notebook store), and every tab of the session and every views socket get a ``changes`` event.
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...checkpoints import CheckpointError
from ...errors import StoreError, ToolError
from ...events import ChangesReviewed
from .base import BaseHandler

ACTIONS = ("undo", "redo", "keep")


class ChangesHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        path, session = self.get_argument("path", None), self.get_argument("session", None)
        turn = _int(self.get_argument("turn", None))
        if (path is None) == (session is None):
            raise web.HTTPError(400, "give ?path=<file> or ?session=<id>[&turn=<n>]")
        parts = self.app
        try:
            turns = await _blocking(parts, _listing, parts, path, session, turn)
        except (CheckpointError, StoreError, ToolError) as exc:
            raise web.HTTPError(400, str(exc).replace("%", "%%")) from exc
        self.reply({"turns": turns})


class ReviewHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self, action: str) -> None:
        body = self.json_body()
        session, turn, only = (body.get(k) for k in ("session", "turn", "only")) if isinstance(body, dict) \
            else (None, None, None)
        if not isinstance(session, str) or not isinstance(turn, int) or isinstance(turn, bool) or not (
                only is None or (isinstance(only, list) and all(isinstance(x, str) for x in only))):
            raise web.HTTPError(400, 'give {"session": id, "turn": n, "only": [row ids, paths or cell ids] or null}')
        try:
            session = (await self.app.services.session_info(session))["id"]
            done = await self._review(action, session, turn, only)
        except StoreError as exc:
            raise self.store_error(exc) from exc
        except RuntimeError as exc:  # the session's turn is running
            raise web.HTTPError(409, str(exc).replace("%", "%%")) from exc
        except (CheckpointError, ToolError) as exc:
            raise web.HTTPError(400, str(exc).replace("%", "%%")) from exc
        _announce(self.app, done)
        self.reply(done.to_dict())

    async def _review(self, action: str, session: str, turn: int, only: list[str] | None) -> Any:
        hub = self.app.hub
        if hub.is_open(session):
            agent = hub.live[session].agent
            return await hub._run(lambda: _through_agent(agent, action, turn, only))
        return await _blocking(self.app, _standalone, self.app, action, session, turn, only)


def _through_agent(agent: Any, action: str, turn: int, only: list[str] | None) -> Any:
    """On a worker thread: the open session's agent keeps, undoes or redoes (its events reach its tabs)."""
    if action == "keep":
        return agent.keep(only=only, turn=turn)
    if only is None:  # every row still awaiting (undo) or undone (redo); a kept row is undone only when named
        wanted = ("pending", "suggested") if action == "undo" else ("undone",)
        only = [r.id for r in agent.changes(turn) if r.status in wanted]
    return getattr(agent, action)(turn=turn, only=only)


def _review_of(parts: Any, session: str):
    from ...checkpoints.review_index import review_for
    from ...store.reviews import ReviewLog
    from ...tools.nbstores import stores

    services = parts.services
    db = services.store().db
    if db is None:
        raise StoreError("the workspace's database is not open")
    return review_for(services.root, services.workspace.state_dir, session, ReviewLog(db), lambda: stores(None))


def _standalone(parts: Any, action: str, session: str, turn: int, only: list[str] | None) -> Any:
    return getattr(_review_of(parts, session), action)(turn, only)


def _listing(parts: Any, path: str | None, session: str | None, turn: int | None) -> list[dict[str, Any]]:
    from ...checkpoints.review_index import session_turn, turns_for_path
    from ...store.reviews import ReviewLog
    from ...tools.nbstores import stores

    services = parts.services
    if session is not None:
        return session_turn(_review_of(parts, services.store().resolve(session)), turn)
    db = services.store().db
    if db is None:
        raise StoreError("the workspace's database is not open")
    rel = services.workspace.rel(services.workspace.resolve(path))
    return turns_for_path(services.root, services.workspace.state_dir, ReviewLog(db), rel, lambda: stores(None))


def _announce(parts: Any, done: Any) -> None:
    """A ``changes`` event per path to every views socket (an open session's agent sent its own to its tabs;
    a session not open here has no tab in this server)."""
    for path, pending in done.pending.items():
        event = ChangesReviewed(session=done.session, turn=done.turn, path=path, pending=pending)
        parts.views.broadcast(event.to_dict())


def _blocking(parts: Any, fn, *args) -> "asyncio.Future[Any]":
    return asyncio.get_running_loop().run_in_executor(parts.services.executor, fn, *args)


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise web.HTTPError(400, "turn must be an integer") from None


ROUTES = [
    (r"/nbagent/api/changes/?", ChangesHandler),
    (r"/nbagent/api/changes/(?P<action>undo|redo|keep)/?", ReviewHandler),
]
