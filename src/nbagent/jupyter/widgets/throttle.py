"""Coalescing: a view asks for a flush on every event; flushes happen at most every ``interval``.

The first request after a quiet spell flushes at once (a tool name or an approval card shows
without delay); requests during the interval fold into one trailing flush, so nothing is lost and
a fast stream costs a bounded number of frontend messages. A flush may send several widget
messages: when the flush function says how many (it returns the count), the next flush waits
until the message budget (MESSAGES_PER_SECOND) allows them, so the rate holds on any machine. One shared daemon thread runs the
timers of every view (a thread per view would pile up in a long notebook); it is hand-written
because threading.Timer starts a thread per call and sched.scheduler cannot be woken early.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Callable

from ...render.redaction import logger

log = logger("nbagent.jupyter")

MESSAGES_PER_SECOND = 20.0
"""Frontend messages per second a view may send while streaming. The budget is 30; the margin is for
the flushes that do not wait (the turn's first render and its end, an approval card), which weigh
most on a short stream: 20,000 deltas stream in under half a second on a quiet machine, where 24/s
measured 26.8-28.4 messages per second of stream."""


class Throttle:
    def __init__(self, flush: Callable[[], int | None], interval: float = 0.1,
                 messages_per_second: float = MESSAGES_PER_SECOND):
        self._flush = flush
        self.interval = interval
        self.messages_per_second = messages_per_second
        self._lock = threading.Lock()
        self._flush_lock = threading.RLock()
        self._scheduled = False
        self._next = 0.0
        """When the next timed flush may run."""

    def request(self) -> None:
        """Ask for a flush soon (thread-safe, cheap: called on every event)."""
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
            due = max(time.monotonic(), self._next)
        _timers().schedule(due, self._run)

    def flush_now(self) -> None:
        """Flush at once on this thread (turn end, tests); a pending timer then finds nothing to do."""
        with self._lock:
            self._scheduled = False
        self._run_flush()

    def _run(self) -> None:
        with self._lock:
            if not self._scheduled:
                return
            self._scheduled = False
        self._run_flush()

    def _run_flush(self) -> None:
        with self._flush_lock:
            sent = None
            try:
                sent = self._flush()
            except Exception:  # a broken view must not kill the shared timer thread
                log.exception("live view flush failed")
            finally:
                wait = max(self.interval, (sent or 0) / self.messages_per_second)
                with self._lock:
                    self._next = time.monotonic() + wait


class _TimerThread:
    """Runs callbacks at their due times on one daemon thread."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._counter = itertools.count()
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._loop, name="nbagent-view-flush", daemon=True)
        self._thread.start()

    def schedule(self, due: float, callback: Callable[[], None]) -> None:
        with self._wake:
            heapq.heappush(self._heap, (due, next(self._counter), callback))
            self._wake.notify()

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._wake.wait(timeout)
                _, _, callback = heapq.heappop(self._heap)
            callback()


_shared: _TimerThread | None = None
_shared_lock = threading.Lock()


def _timers() -> _TimerThread:
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = _TimerThread()
        return _shared
