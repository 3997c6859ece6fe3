"""LiveContext: one agent's attached context, wired into its runtime (store, poller, absorb, fork).

The runtime calls ``absorb`` at the start of each turn; a failure there (a locked or broken database)
is reported once as an error event and the turn goes on without notes: context never costs a turn.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from .. import events as ev
from ..workspace.root import Workspace
from ..workspace.trust import trust
from . import poller as pollers
from ..render.redaction import logger
from .absorber import absorb, pending
from .fetch import refresh
from .records import Source, SourceError
from .store import ContextStore

log = logger("nbagent.context")
WAKE_WINDOW = 600.0
"""Seconds before one source may wake the agent again (a source that changes every 30 s must not
start a turn every 30 s)."""
WAKE_PROMPT = "[context wake: {names} changed]"


class LiveContext:
    def __init__(self, state, config, emit: Callable[[ev.AnyEvent], None]):
        self.config = config
        self.emit = emit
        self.state = state
        self.store = ContextStore(store_db(state), root=config.workspace)
        self.poller = None
        if config.persist and state.store is not None and config.context_poll:
            self.poller = pollers.acquire(config.workspace, tick=config.context_tick,
                                          min_every=config.context_min_every, timeout=config.context_timeout)
        self._failed = False
        self._closed = threading.Event()
        self._waker: threading.Thread | None = None
        self._woken: dict[str, float] = {}

    def rebind(self, state) -> None:
        """After a session switch: the new state (its database may be a new one for an in-memory state)."""
        self.state = state
        db = store_db(state)
        if db is not self.store.db:
            self.store = ContextStore(db, root=self.config.workspace)

    @property
    def session_id(self) -> str:
        return self.state.session.id

    def absorb(self, turn_id: str) -> list[dict[str, Any]]:
        """Add the notes due before this turn; returns the messages appended (for the loop's counters)."""
        session = self.state.session
        before = len(session.log)  # not session.messages: that would read what a resume left in the store
        try:
            absorb(self.store, session, self.emit, turn_id)
        except Exception as exc:  # never lose the turn over context
            log.warning("attached context not absorbed: %s", exc, exc_info=True)
            if not self._failed:
                self._failed = True
                self.emit(ev.Error(message=f"attached context could not be read: {exc}", kind="context",
                                   turn_id=turn_id))
        return session.message_heads()[before:]  # appended whole: only a resume leaves heads

    def moved(self, from_session: str) -> int:
        """The session continued into a new one (fork): its sources and what it had seen move along."""
        if from_session == self.session_id:
            return 0
        return self.store.move(from_session, self.session_id)

    # ----- fetching now ---------------------------------------------------------------------------
    def fetch_now(self, source: Source) -> None:
        """A command or file source's text now (after an attach or an approval), or its error."""
        fetched = refresh(source, Workspace(self.config.workspace), timeout=self.config.context_timeout)
        if fetched.needs_approval:
            return
        if fetched.output is not None:
            self.store.record(source.scope, source.name, fetched.output)
        else:
            self.store.record_error(source.scope, source.name, fetched.error or "failed")

    def approve(self, name: str) -> Source:
        """The user approves a stored command source this session sees: its exact command is recorded as
        trusted for this workspace (nbagent.workspace.trust) and its first text fetched now."""
        source = self.store.find(name, self.session_id)
        if source.kind != "command":
            raise SourceError(f"{name!r} is a {source.kind} source: only command sources need approval")
        trust(self.config.workspace, source.spec, what=f"context source {name}")
        self.fetch_now(source)
        return self.store.find(name, self.session_id)

    # ----- wake --------------------------------------------------------------------------------
    def start_waker(self, wake: Callable[[list[str]], bool]) -> None:
        """With ``context_wake`` on: at each poller tick, a change of a source attached with wake=True
        calls ``wake(names)`` (the agent starts a turn if it is idle), at most once per WAKE_WINDOW
        seconds for a source. Off by default."""
        if not self.config.context_wake or self._waker is not None:
            return
        self._waker = threading.Thread(target=self._watch, args=(wake,), name="nbagent-context-wake", daemon=True)
        self._waker.start()

    def _watch(self, wake: Callable[[list[str]], bool]) -> None:
        while not self._closed.wait(self.config.context_tick):
            try:
                names = self.due_wakes(time.monotonic())
                if names and wake(names):
                    now = time.monotonic()
                    self._woken.update({name: now for name in names})
            except Exception:  # a locked database: try again at the next tick
                log.debug("context wake check failed", exc_info=True)

    def due_wakes(self, now: float) -> list[str]:
        """Sources asking to wake the agent: changed or failing since last seen, outside their window."""
        return sorted({d.source for d in pending(self.store, self.session_id)
                       if d.wake and now - self._woken.get(d.source, -WAKE_WINDOW) >= WAKE_WINDOW})

    def close(self) -> None:
        self._closed.set()
        if self.poller is not None:
            pollers.release(self.poller)
            self.poller = None


def store_db(state):
    """The database holding ``state``'s session: the workspace's, or the in-memory one (persist off)."""
    return state.database
