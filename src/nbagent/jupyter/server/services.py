"""The workspace's stored state as the REST handlers see it: sessions, memory, the @ picker.

Everything here blocks (SQLite, the file walk), so every public coroutine runs
its work on the hub's thread pool. Nothing is opened at server start: the
database on the first sessions or memory request, the file walk on the first
@ query (then cached by ``Workspace.files`` and refreshed after its TTL).
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Callable, TypeVar

from ...errors import StoreError
from ...memory.entries import ProjectMemory
from ...store import SessionStore
from ...workspace.root import Workspace

T = TypeVar("T")


class WorkspaceServices:
    def __init__(self, root: Path, executor: Executor):
        self.root = Path(root)
        self.executor = executor
        self.workspace = Workspace(self.root)
        self._store: SessionStore | None = None
        self._memory: ProjectMemory | None = None
        self._lock = threading.Lock()

    # ----- sessions ----------------------------------------------------------------------
    async def list_sessions(self) -> list[dict[str, Any]]:
        return await self._run(lambda: [info.to_dict() for info in self.store().list()])

    async def create_session(self) -> dict[str, Any]:
        def create() -> dict[str, Any]:
            session = self.store().create(origin=".")
            return self.store().info(session.id).to_dict()

        return await self._run(create)

    async def session_info(self, session_id: str) -> dict[str, Any]:
        return await self._run(lambda: self.store().info(session_id).to_dict())

    async def delete_session(self, session_id: str) -> str:
        def delete() -> str:
            from ...checkpoints.turn_guard import forget_sessions

            deleted = self.store().delete(session_id)
            forget_sessions(self.store().root, [deleted])  # its journal and checkpoints go with it
            return deleted

        return await self._run(delete)

    async def fork_session(self, session_id: str, up_to_turn: int | None) -> dict[str, Any]:
        def fork() -> dict[str, Any]:
            session = self.store().fork(self.store().resolve(session_id), up_to_turn)
            return self.store().info(session.id).to_dict()

        return await self._run(fork)

    async def messages(self, session_id: str) -> list[dict[str, Any]]:
        return await self._run(lambda: self.store().messages(self.store().resolve(session_id)))

    # ----- memory ------------------------------------------------------------------------
    async def memory_entries(self) -> list[dict[str, Any]]:
        return await self._run(lambda: [e.to_dict() for e in self.memory().entries()])

    async def forget(self, text: str) -> list[dict[str, Any]]:
        return await self._run(lambda: [e.to_dict() for e in self.memory().forget(text)])

    async def forget_id(self, entry_id: int) -> list[dict[str, Any]]:
        return await self._run(lambda: [r.to_dict() for r in self.memory().index.forget_ids([entry_id])])

    async def memory_rows(self) -> list[dict[str, Any]]:
        """Every row of the hybrid memory (category, tags, counts, expiry) for the panel's Memory tab."""
        return await self._run(lambda: [r.to_dict() for r in self.memory().index.rows()])

    async def memory_search(self, query: str, k: int) -> list[dict[str, Any]]:
        """The best rows for ``query`` with score and why (the query is embedded on the pool, not the loop)."""
        from ...memory.handle import MemoryHandle

        return await self._run(lambda: [h.to_dict() for h in MemoryHandle([self.memory().index]).hits(query, k)])

    # ----- files -------------------------------------------------------------------------
    async def pick(self, query: str, limit: int) -> list[str]:
        return await self._run(self.workspace.pick, query, limit)

    # ----- plumbing ----------------------------------------------------------------------
    def store(self) -> SessionStore:
        with self._lock:
            if self._store is None:
                self._store = SessionStore(self.root)
            return self._store

    def memory(self) -> ProjectMemory:
        store = self.store()
        if store.db is None:
            raise store.broken or StoreError("the workspace's database is not open")
        if self._memory is None or self._memory.db is not store.db:
            from ...config import AgentConfig
            from ...memory.entries import project_memory

            self._memory = project_memory(store.db, AgentConfig.load(workspace=self.root))
        return self._memory

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _run(self, fn: Callable[..., T], *args: Any) -> "asyncio.Future[T]":
        return asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
