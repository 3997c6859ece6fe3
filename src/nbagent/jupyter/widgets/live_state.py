"""LiveState: the AgentState the live view renders, kept current by ``reduce``.

It also times each burst of reasoning (the one thing the view shows that the state does not hold).

The view registry keeps one per agent, started from ``Agent.watch``'s snapshot, so every view of that
agent, opened at the start or mid-turn, renders the same state by the same rules; a TurnView fed bare
events (no agent) keeps its own.
"""

from __future__ import annotations

import threading
import time

from ... import events as ev
from ...render.agent_state import AgentState, reduce

MAX_TIMED_BURSTS = 500
"""Reasoning bursts whose duration is kept (the oldest are forgotten: their views have ended)."""

BurstKey = tuple[str, int]
"""(turn id, index of the reasoning item in the turn's items)."""


class LiveState:
    def __init__(self, state: AgentState | None = None):
        self.state = state or AgentState()
        self._lock = threading.Lock()
        self._started: dict[BurstKey, float] = {}
        self._seconds: dict[BurstKey, float] = {}
        self._open: BurstKey | None = None

    def apply(self, event: ev.AnyEvent, at: float | None = None) -> AgentState:
        """Reduce ``event`` onto the state and time the reasoning bursts; returns the new state."""
        at = time.monotonic() if at is None else at
        with self._lock:
            self.state = reduce(self.state, event)
            self._time(event, at)
            return self.state

    def thinking_seconds(self, turn_id: str, index: int) -> float | None:
        """How long the reasoning item ``index`` of ``turn_id`` took; None when it began before we watched."""
        key = (turn_id, index)
        with self._lock:
            if key == self._open:
                return max(0.0, time.monotonic() - self._started[key])
            return self._seconds.get(key)

    def _time(self, event: ev.Event, at: float) -> None:
        turn = self.state.turn
        if isinstance(event, ev.ReasoningDelta) and turn is not None and turn.turn_id == event.turn_id:
            key = (event.turn_id, len(turn.items) - 1)
            if key != self._open:
                self._close(at)
                self._open, self._started[key] = key, at
        elif self._open is not None and event.turn_id == self._open[0] and not isinstance(event, ev.Usage):
            self._close(at)  # anything else of that turn (text, a tool, its end) ends the burst

    def _close(self, at: float) -> None:
        if self._open is None:
            return
        key, self._open = self._open, None
        self._seconds[key] = max(0.0, at - self._started.pop(key))
        while len(self._seconds) > MAX_TIMED_BURSTS:
            self._seconds.pop(next(iter(self._seconds)))
