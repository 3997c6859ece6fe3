"""LiveContext: one agent's attached context, wired into its runtime (store, poller, absorb, fork).

The runtime calls ``absorb`` at the start of each turn; a failure there (a locked or broken database)
is reported once as an error event and the turn goes on without notes: context never costs a turn.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from .. import events as ev
from . import poller as pollers
from .absorber import absorb
from .store import ContextStore

log = logging.getLogger("nbagent.context")


class LiveContext:
    def __init__(self, state, config, emit: Callable[[ev.Event], None]):
        self.config = config
        self.emit = emit
        self.state = state
        self.store = ContextStore(store_db(state))
        self.poller = None
        if config.persist and state.store is not None and config.context_poll:
            self.poller = pollers.acquire(config.workspace, tick=config.context_tick,
                                          min_every=config.context_min_every, timeout=config.context_timeout)
        self._failed = False

    def rebind(self, state) -> None:
        """After a session switch: the new state (its database may be a new one for an in-memory state)."""
        self.state = state
        db = store_db(state)
        if db is not self.store.db:
            self.store = ContextStore(db)

    @property
    def session_id(self) -> str:
        return self.state.session.id

    def absorb(self, turn_id: str) -> list[dict[str, Any]]:
        """Add the notes due before this turn; returns the messages appended (for the loop's counters)."""
        session = self.state.session
        before = len(session.messages)
        try:
            absorb(self.store, session, self.emit, turn_id)
        except Exception as exc:  # never lose the turn over context
            log.warning("attached context not absorbed: %s", exc, exc_info=True)
            if not self._failed:
                self._failed = True
                self.emit(ev.Error(message=f"attached context could not be read: {exc}", kind="context",
                                   turn_id=turn_id))
        return session.messages[before:]

    def moved(self, from_session: str) -> int:
        """The session continued into a new one (fork): its sources and what it had seen move along."""
        if from_session == self.session_id:
            return 0
        return self.store.move(from_session, self.session_id)

    def close(self) -> None:
        if self.poller is not None:
            pollers.release(self.poller)
            self.poller = None


def store_db(state):
    """The database holding ``state``'s session: the workspace's, or the in-memory one (persist off)."""
    return state.store.db if state.store is not None else state._db
