"""Open notebook views without collaboration: JupyterLab tabs that hold a notebook and apply edits to it.

Without jupyter-collaboration a notebook open in JupyterLab lives in the tab's model, and a write to
its file would meet "File Changed" at the next save. So the side panel's front end keeps a socket
here (/nbagent/api/views/ws) and reports the notebooks its tabs have open; an edit to one of them is
sent to one such tab, which applies it through the notebook model and saves, then answers with the
notebook as it now is. Before a turn's checkpoint the tab is asked to save (``save``): a tab writes
outputs only when it is saved, and the cells the user ran before the turn are theirs, not the turn's. Tokens are checked here on a fresh read of the tab, and the tab compares each
touched cell's source with the one checked right before it writes (the browser has no hash at hand
on plain-HTTP hosts, so the source itself is the token there).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web, websocket

from ...errors import ToolError
from ...tools.nbdoc import Snapshot, StaleCell, check_token, find

ANSWER_TIMEOUT = 10.0


class OpenViews:
    """The tabs connected to this server and the notebooks each has open. Used on the server loop only."""

    def __init__(self, timeout: float = ANSWER_TIMEOUT):
        self.timeout = timeout
        self.tabs: dict[Any, list[str]] = {}
        self.sockets: set[Any] = set()
        """Every views socket connected (a tab that reported no notebook yet included): events go to all."""
        self.pending: dict[int, tuple[Any, asyncio.Future]] = {}
        self._ids = itertools.count(1)

    def report(self, tab: Any, paths: list[str]) -> None:
        self.tabs[tab] = [p for p in paths if isinstance(p, str)]

    def broadcast(self, event: dict) -> None:
        """Send an event (a ``changes`` event) to every connected tab."""
        text = json.dumps(event)
        for tab in list(self.sockets):
            tab.send_text(text)

    def drop(self, tab: Any) -> None:
        self.sockets.discard(tab)
        self.tabs.pop(tab, None)
        for key, (owner, future) in list(self.pending.items()):
            if owner is tab and not future.done():
                future.set_exception(ToolError("the JupyterLab tab holding the notebook closed before it "
                                               "answered; read the notebook again to see what it holds"))
                self.pending.pop(key, None)

    def holds(self, rel: str) -> bool:
        return any(rel in paths for paths in self.tabs.values())

    def answer(self, tab: Any, data: dict) -> None:
        key = data.get("id")
        entry = self.pending.pop(key, None) if isinstance(key, int) else None
        if entry is not None and entry[0] is tab and not entry[1].done():
            entry[1].set_result(data)

    async def read(self, rel: str) -> Snapshot | None:
        reply = await self._ask(rel, {"type": "read", "path": rel})
        return None if reply is None else _snapshot(reply)

    async def save(self, rel: str) -> Snapshot | None:
        """Have the tab save the notebook as it shows it (outputs of cells the user ran included)."""
        reply = await self._ask(rel, {"type": "save", "path": rel})
        return None if reply is None else _snapshot(reply)

    async def apply(self, rel: str, ops: list[dict], name: str) -> Snapshot | None:
        current = await self.read(rel)
        if current is None:
            return None
        ops = [dict(op) for op in ops]
        for op in ops:
            if op.get("token") is not None:
                cell = current.notebook["cells"][find(current.notebook["cells"], op["cell_id"], name)]
                check_token(cell, op, name)
                op["expect"] = {"cell_type": cell["cell_type"], "source": cell["source"]}
        reply = await self._ask(rel, {"type": "apply", "path": rel, "ops": ops})
        if reply is None:
            return None
        if reply.get("stale"):
            raise StaleCell(f"{reply.get('error')} in {name} since you read it; nothing was written. Read it "
                            "again with notebook_read and redo the change on what is there now.")
        return _snapshot(reply)

    async def _ask(self, rel: str, message: dict) -> dict | None:
        tabs = [tab for tab, paths in self.tabs.items() if rel in paths]
        if not tabs:
            return None
        tab = tabs[-1]
        key = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[key] = (tab, future)
        tab.send_text(json.dumps({**message, "id": key}))
        try:
            reply = await asyncio.wait_for(future, self.timeout)
        except asyncio.TimeoutError:
            self.pending.pop(key, None)
            raise ToolError(f"the JupyterLab tab holding {rel} did not answer within {self.timeout:.0f} s; "
                            "read the notebook again before changing it") from None
        if reply.get("error") and not reply.get("stale"):
            raise ToolError(f"the JupyterLab tab could not apply the change to {rel}: {reply['error']}")
        return reply


def _snapshot(reply: dict) -> Snapshot:
    nb = reply.get("notebook") or {}
    if not isinstance(nb.get("cells"), list):
        raise ToolError("the JupyterLab tab sent no notebook")
    major, minor = int(nb.get("nbformat", 4)), int(nb.get("nbformat_minor", 5))
    for cell in nb["cells"]:
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    return Snapshot(nb, "open view", True, f"{major}.{minor}", (major, minor) < (4, 5), 0)


class ViewsSocket(ExtensionHandlerMixin, JupyterHandler, websocket.WebSocketHandler):
    """One JupyterLab tab: it reports its open notebooks and answers read, save and apply requests."""

    auth_resource = "nbagent"

    @ws_authenticated
    async def get(self) -> None:
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "write", self.auth_resource))
        if not allowed:
            raise web.HTTPError(403)
        result = super().get()
        if result is not None:
            await result

    def open(self, *args: Any, **kwargs: Any) -> None:
        views: OpenViews = getattr(self.extensionapp, "views")
        views.sockets.add(self)

    def on_message(self, message: str | bytes) -> None:
        try:
            data = json.loads(message)
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        views: OpenViews = getattr(self.extensionapp, "views")
        if data.get("type") == "open" and isinstance(data.get("paths"), list):
            views.report(self, data["paths"])
        elif data.get("type") == "result":
            views.answer(self, data)

    def on_close(self) -> None:
        views: OpenViews = getattr(self.extensionapp, "views")
        views.drop(self)

    def send_text(self, text: str) -> None:
        if self.ws_connection is None or self.ws_connection.is_closing():
            return
        try:
            self.write_message(text)
        except websocket.WebSocketClosedError:
            pass
