"""The output of a long-running cell as a source: a block's printed output, its tail pushed every few seconds.

``sys.stdout`` is wrapped for the block: what it prints still shows, and the last ``TAIL_CHARS``
characters are pushed at most every ``every`` seconds and once more when the block ends.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable

TAIL_CHARS = 16_000


class Capture:
    def __init__(self, push: Callable[[str], Any], *, every: float = 2.0):
        self._push = push
        self.every = every
        self._tail = ""
        self._lock = threading.Lock()
        self._last = 0.0
        self._real: Any = None

    def __enter__(self) -> "Capture":
        self._real = sys.stdout
        sys.stdout = _Tee(self._real, self._wrote)
        return self

    def __exit__(self, *exc) -> None:
        sys.stdout = self._real
        self.flush()

    def _wrote(self, text: str) -> None:
        with self._lock:
            self._tail = (self._tail + text)[-TAIL_CHARS:]
            due = time.monotonic() - self._last >= self.every
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            tail, self._last = self._tail, time.monotonic()
        if tail.strip():
            self._push(tail)


class _Tee:
    """Writes go to the real stream and to the capture; everything else is the real stream's."""

    def __init__(self, real: Any, wrote: Callable[[str], None]):
        self._real, self._wrote = real, wrote

    def write(self, text: str) -> int:
        written = self._real.write(text)
        self._wrote(text)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)
