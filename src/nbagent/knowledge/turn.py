"""TurnKnowledge: what the runtime asks for on each turn (instructions, map, relevant memory).

It also saves /compact's summary into memory and feeds the telemetry recorder, so
the runtime needs one object and a few calls: ``begin_turn``, ``instructions_block``,
``map_block``, ``relevant_note``, ``observe`` and ``save_summary``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path
from typing import Any, Callable

from .. import events as ev
from ..render.redaction import logger
from ..workers import shared_pool
from .instructions import InstructionFile, Instructions
from ..memory.index import MemoryIndex, open_index
from ..memory.relevant import RelevantMemory

log = logger("nbagent.knowledge")

SUMMARY_CHARS = 1_200
MAP_FIRST_WAIT = 1.0


class TurnKnowledge:
    def __init__(self, config, *, state: Callable[[], Any], emit: Callable[[ev.AnyEvent], None],
                 workspace_root: Path):
        self.config = config
        self._state = state
        self.emit = emit
        self.root = workspace_root
        self.instructions = Instructions(workspace_root, _start_dir(workspace_root, config.origin))
        self._global: MemoryIndex | None = None
        self.relevant = RelevantMemory(self.memory_indexes)
        self._repo_map = None
        self._map_text: str | None = None
        self._map_future: concurrent.futures.Future | None = None
        self.telemetry = None
        if config.telemetry:
            from .telemetry import TraceRecorder

            self.telemetry = TraceRecorder.for_workspace(workspace_root, config)

    # ----- scopes ----------------------------------------------------------------------------
    def memory_indexes(self) -> list[MemoryIndex]:
        memory = getattr(self._state(), "memory", None)
        if memory is None:
            return []
        scope = self.config.memory_scope
        indexes = [memory.index] if scope in ("workspace", "all") else []
        if scope in ("global", "all"):
            glob = self._global_index(memory.index)
            if glob is not None:
                indexes.append(glob)
        return indexes

    def _global_index(self, workspace_index: MemoryIndex) -> MemoryIndex | None:
        if self._global is None:
            try:
                self._global = open_index("global", embedder=workspace_index.embedder)
            except Exception as exc:  # an unreadable global store: the workspace's memory still works
                log.warning("the global memory cannot be opened: %s", exc)
                return None
        return self._global

    # ----- per turn and per step -----------------------------------------------------------
    def begin_turn(self, prompt: str, turn_id: str) -> None:
        if self.config.instructions:
            self.instructions.refresh()
        if self.config.memory:
            self.relevant.begin_turn(prompt)

    async def prepare_turn(self) -> Callable[[], object] | None:
        """Refresh the repo map for this turn (instruction files were re-read by begin_turn).

        The map is rebuilt in a thread each turn; a turn uses the newest finished one. Only the
        first turn waits for it, at most MAP_FIRST_WAIT seconds (a cold map of a big repository
        can take seconds; the cache makes the next builds cheap). Later turns get the rebuild back, to
        start once their request is on its way (Loop.while_sending): it would not be used by this one,
        and a thread started now takes the interpreter while the request is being made.
        """
        if not self.config.repo_map:
            return None
        if self._map_text is not None:
            return self._refresh_map
        future = self._refresh_map()
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), MAP_FIRST_WAIT)
        except (asyncio.TimeoutError, Exception):
            pass
        return None

    def instructions_block(self) -> str:
        return self.instructions.block() if self.config.instructions else ""

    def map_block(self) -> str:
        """The newest finished repo map ("" before the first one, or with the map off)."""
        return (self._map_text or "") if self.config.repo_map else ""

    def _refresh_map(self) -> concurrent.futures.Future:
        if self._map_future is not None and not self._map_future.done():
            return self._map_future
        # One build at a time per agent (the future above), on the process's shared threads.
        self._map_future = shared_pool().submit(self.repo_map_block)
        return self._map_future

    def repo_map_block(self) -> str:
        """Build the map now (blocking) and keep it for the next turns."""
        if self._repo_map is None:
            from .repomap import RepoMap

            self._repo_map = RepoMap(self.root)
        try:
            self._map_text = self._repo_map.block()
        except Exception as exc:  # a map is a convenience: never fail a turn over it
            log.warning("the repo map could not be built: %s", exc)
            self._map_text = self._map_text or ""
        return self._map_text

    def relevant_note(self, query: str, sent: set[tuple[str, int]], turn_id: str = "") -> tuple[str, list]:
        """(the block of memory relevant to ``query`` that is not in ``sent``, its hits)."""
        if not self.config.memory or not query.strip():
            return "", []
        block, hits = self.relevant.fresh(query, sent)
        if hits:
            self._announce(query, hits, turn_id)
        return block, hits

    def _announce(self, query: str, hits, turn_id: str) -> None:
        """A ``memory_injected`` event: the entries this step's prompt carries, with score and why."""
        self.emit(ev.MemoryInjected(entries=[h.to_dict() for h in hits], turn_id=turn_id))

    def memory_handle(self):
        """The memory scopes of this agent as a MemoryHandle (DataFrames for people)."""
        from ..memory.handle import MemoryHandle

        return MemoryHandle(self.memory_indexes())

    def instruction_files(self) -> list[InstructionFile]:
        return self.instructions.files()

    # ----- writes and observation ------------------------------------------------------------
    def save_summary(self, summary: str) -> bool:
        """Keep /compact's summary in memory when allowed; True when it was saved."""
        memory = getattr(self._state(), "memory", None)
        if memory is None or not self.config.auto_memory or not self.memory_writes_allowed():
            return False
        text = summary.strip()[:SUMMARY_CHARS]
        try:
            memory.index.add(text, "summary", tags=["compact"])
        except ValueError:
            return False
        return True

    def memory_writes_allowed(self) -> bool:
        """A memory write is a change later sessions obey: only without an approval to ask for."""
        override = (getattr(self.config, "tool_approvals", None) or {}).get("remember")
        if self.config.approval == "read-only":
            return False
        return self.config.approval == "auto" or override == "never"

    def observe(self, event: ev.Event) -> None:
        if self.telemetry is not None:
            try:
                self.telemetry.observe(event)
            except Exception as exc:  # telemetry must never break a turn
                log.debug("telemetry failed: %s", exc)

    def close(self) -> None:
        if self._map_future is not None:
            self._map_future.cancel()  # if it has not started yet
        if self._global is not None:
            self._global.close()
            self._global.db.close()


def _start_dir(root: Path, origin: str | None) -> Path | None:
    if not origin or origin == ".":
        return None
    path = Path(origin)
    return path if path.is_absolute() else root / path
