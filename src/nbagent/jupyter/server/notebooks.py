"""The server's notebook store: every agent's notebook reads, edits and runs, on the server's loop.

Each read or edit goes to the first of
1. the live shared document when jupyter-collaboration has a room open for the notebook
   (``get_document(..., copy=False)``; never ``create=True``, whose room is never cleaned up);
2. a JupyterLab tab that has the notebook open without collaboration (nbagent.jupyter.server.views);
3. the file, through nbagent.tools.nbfile.
Agents in this process reach it through ``InProcessStore`` (registered with nbagent.tools.nbdoc);
agents in kernels through the kernel link's handler. jupyter-collaboration stays optional: without
it there is never a live document, and the tab or the file is used.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from ...errors import ToolError
from ...render.redaction import logger
from ...tools.nbdoc import Snapshot
from ...tools.nbfile import FILE_STORE
from ...workspace.root import Workspace
from .cell_runner import kernel_action, replay_cells, run_cells

log = logger("nbagent.server")
CALL_TIMEOUT = 60.0
RUN_TIMEOUT = 600.0
ACTION_TIMEOUT = 45.0
"""Seconds an undo line may take: a ready client (up to 30 s) and the line itself (up to 10 s)."""
RELEASE_TIMEOUT = 5.0
"""Seconds a deleted session's release waits for each kernel."""
REPLAY_TIMEOUT = 3600.0
"""Seconds a whole restart-and-replay may take (each cell has cell_runner's CELL_TIMEOUT)."""


class ServerNotebooks:
    """Where each notebook lives right now, and the one place that changes it. Runs on the server loop."""

    def __init__(self, serverapp: Any, root: Path, executor: Executor, views: Any = None):
        self.serverapp = serverapp
        self.root = Path(root)
        self.workspace = Workspace(self.root)
        self.executor = executor
        self.views = views

    def relative(self, path: Path) -> str | None:
        """``path`` relative to the server root, or None when it is outside (its owner uses the file)."""
        try:
            real = self.workspace.resolve(str(path), write=True)
        except ToolError:
            return None
        return self.workspace.rel(real)

    async def live_document(self, rel: str) -> Any:
        settings = self.serverapp.web_app.settings
        ext = settings.get("jupyter_server_ydoc")
        if ext is None or "yroom_manager" in settings:
            # jupyter-server-documents registers the same key but always creates the room it is asked
            # for (rooms that are never cleaned up): there, the open tab applies the edit instead.
            return None
        try:
            return await ext.get_document(path=rel, content_type="notebook", file_format="json", copy=False)
        except Exception as exc:  # a room in a bad state: say so, and use the file
            log.warning("nbagent: no live document for %s: %s", rel, exc)
            return None

    async def aread(self, rel: str, path: Path, name: str, *, allow_missing: bool = False) -> Snapshot:
        doc = await self.live_document(rel)
        if doc is not None:
            from . import live_doc  # pycrdt is there only with jupyter-collaboration

            return live_doc.snapshot(doc)
        if self.views is not None and self.views.holds(rel):
            snap = await self.views.read(rel)
            if snap is not None:
                return snap
        return await self._blocking(FILE_STORE.read, self.root / rel, name, allow_missing)

    async def aapply(self, rel: str, path: Path, name: str, ops: list[dict], *,
                     allow_missing: bool = False) -> Snapshot:
        doc = await self.live_document(rel)
        if doc is not None:
            from . import live_doc

            live_doc.apply(doc, ops, name)  # on this loop, in one transaction, nothing awaited in between
            return live_doc.snapshot(doc)
        if self.views is not None and self.views.holds(rel):
            snap = await self.views.apply(rel, ops, name)
            if snap is not None:
                return snap
        return await self._blocking(FILE_STORE.apply, self.root / rel, name, ops, allow_missing)

    async def asave(self, rel: str) -> Snapshot | None:
        """Save a notebook open in a tab without collaboration; None when no tab holds it (a room
        saves by itself, a closed notebook is its file)."""
        if await self.live_document(rel) is not None or self.views is None or not self.views.holds(rel):
            return None
        return await self.views.save(rel)

    async def arun(self, rel: str, name: str, cell_ids: list[str], *, caller_kernel: str | None,
                   watch: dict | None = None) -> dict:
        kernel_id = self.runnable_kernel(rel, name, caller_kernel)
        return await run_cells(self, rel, name, cell_ids, kernel_id, watch)

    def runnable_kernel(self, rel: str, name: str, caller_kernel: str | None) -> str:
        """The kernel notebook_run would queue cells on, or the ToolError that refuses the run. Asked
        before the approval card too, so a run that cannot happen is refused before anyone is asked."""
        kernel_id = self._kernel_of(rel, name)
        if caller_kernel and kernel_id == caller_kernel:
            raise ToolError(f"refused: {name} runs in the kernel this agent itself runs in, which is busy with "
                            "this turn; cells queued there would wait for the turn to end, and the turn for "
                            "them (a deadlock). Instead run their code with kernel_run (it runs in this same "
                            "kernel, now), or tell the user which cells to run.")
        return kernel_id

    async def akernel_action(self, kernel_id: str, action: str, args: dict) -> dict:
        return await kernel_action(self, kernel_id, action, args)

    def kernel_ids(self) -> list[str]:
        """The kernels running in this server (where a session's undo records may be kept)."""
        return list(self.serverapp.kernel_manager.list_kernel_ids())

    async def arelease_owner(self, owner: str) -> None:
        """Release ``owner``'s undo records in every kernel (its session was deleted). Best effort, at
        most RELEASE_TIMEOUT per kernel; a kernel that never ran the watcher is not touched."""
        for kernel_id in self.kernel_ids():
            try:
                await asyncio.wait_for(kernel_action(self, kernel_id, "release", {"owner": owner, "if_loaded": True}),
                                       RELEASE_TIMEOUT)
            except Exception as exc:  # busy, gone, slow: its records fall to the kernel's caller limit
                log.info("nbagent: could not release %s's undo records in kernel %s: %s", owner, kernel_id, exc)

    async def akernel_replay(self, kernel_id: str, cells: list[dict], owner: str) -> dict:
        return await replay_cells(self, kernel_id, cells, owner)

    def _kernel_of(self, rel: str, name: str) -> str:
        manager = self.serverapp.session_manager
        for session in _sessions(manager):
            if session.get("path") == rel and (session.get("kernel") or {}).get("id"):
                return session["kernel"]["id"]
        raise ToolError(f"{name} has no running kernel in this Jupyter server: open it in JupyterLab "
                        "and start its kernel first")

    def _blocking(self, fn, *args) -> "asyncio.Future[Any]":
        return asyncio.get_running_loop().run_in_executor(self.executor, _call, fn, args)


def _call(fn, args):
    *head, allow_missing = args
    return fn(*head, allow_missing=allow_missing)


def _sessions(manager: Any) -> list[dict]:
    # SessionManager.list_sessions is a coroutine in jupyter_server 2; its rows are read from SQLite
    # synchronously, so the cursor is used directly here to stay off the loop's await points.
    cursor = manager.cursor
    cursor.execute("SELECT session_id, path, kernel_id FROM session")
    return [{"id": sid, "path": path, "kernel": {"id": kid}} for sid, path, kid in cursor.fetchall()]


class InProcessStore:
    """The server's store for agents in this process: their tools run on worker threads, the edits
    on the server's loop (a live document must be changed there, or its room fails to save)."""

    def __init__(self, notebooks: ServerNotebooks, loop: asyncio.AbstractEventLoop):
        self.notebooks = notebooks
        self.loop = loop

    def read(self, path: Path, name: str, *, allow_missing: bool = False) -> Snapshot | None:
        rel = self.notebooks.relative(path)
        return None if rel is None else self._wait(
            self.notebooks.aread(rel, path, name, allow_missing=allow_missing), CALL_TIMEOUT)

    def apply(self, path: Path, name: str, ops: list[dict], *, allow_missing: bool = False) -> Snapshot | None:
        rel = self.notebooks.relative(path)
        return None if rel is None else self._wait(
            self.notebooks.aapply(rel, path, name, ops, allow_missing=allow_missing), CALL_TIMEOUT)

    def save(self, path: Path, name: str) -> Snapshot | None:
        """Save the notebook where a tab holds it open (nbagent.checkpoints.notebooks.settle)."""
        rel = self.notebooks.relative(path)
        return None if rel is None else self._wait(self.notebooks.asave(rel), CALL_TIMEOUT)

    def run(self, path: Path, name: str, cell_ids: list[str], *, watch: dict | None = None) -> dict | None:
        rel = self.notebooks.relative(path)
        return None if rel is None else self._wait(
            self.notebooks.arun(rel, name, cell_ids, caller_kernel=None, watch=watch), RUN_TIMEOUT)

    def kernel_action(self, kernel_id: str, action: str, args: dict) -> dict | None:
        """A line of the kernel's undo record (nbagent.checkpoints.remote_ledger's transport); the server's
        own kernels only."""
        return self._wait(self.notebooks.akernel_action(kernel_id, action, args), ACTION_TIMEOUT)

    def kernel_ids(self) -> list[str]:
        """The server's running kernels (nbagent.checkpoints.remote_ledger looks for a session's records there)."""
        return self.notebooks.kernel_ids()

    def kernel_replay(self, kernel_id: str, cells: list[dict], owner: str) -> dict | None:
        """Restart and replay ``cells`` in one of the server's own kernels (nbagent.checkpoints.remote_ledger)."""
        return self._wait(self.notebooks.akernel_replay(kernel_id, cells, owner), REPLAY_TIMEOUT)

    def _wait(self, coro, timeout: float):
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            coro.close()
            raise ToolError("internal: a notebook tool ran on the server's own loop")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)
