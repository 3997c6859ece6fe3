"""Batch progress: a counter that front ends draw (a bar in a terminal, a widget in Jupyter).

The engine only counts; drawing is a front end's job. A front end registers how it draws
(``register_progress``): nbagent.jupyter.widgets.batch_progress registers its widget when
``nbagent.batch`` is first used inside a Jupyter kernel, so batching never imports a front end.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable


class Progress:
    """Counts finished tasks and tells ``callback(done, total, row)``; subclasses draw."""

    def __init__(self, total: int, callback: Callable[[int, int, dict], None] | None = None):
        self.total = total
        self.done = 0
        self.failed = 0
        self._callback = callback
        self._lock = threading.Lock()

    def finished(self, row: dict[str, Any]) -> None:
        with self._lock:
            self.done += 1
            self.failed += bool(row.get("error"))
            self.draw(row)
            if self._callback is not None:
                self._callback(self.done, self.total, row)

    def draw(self, row: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


class TerminalProgress(Progress):
    """A tqdm bar on stderr."""

    def __init__(self, total: int):
        super().__init__(total)
        from tqdm import tqdm

        self._bar = tqdm(total=total, unit="task", desc="nbagent batch", file=sys.stderr, dynamic_ncols=True)

    def draw(self, row: dict[str, Any]) -> None:
        self._bar.update(1)
        if self.failed:
            self._bar.set_postfix(failed=self.failed)

    def close(self) -> None:
        self._bar.close()


_FRONT_ENDS: list[Callable[[int], Progress | None]] = []


def register_progress(factory: Callable[[int], Progress | None]) -> None:
    """Let a front end draw batches: ``factory(total)`` returns its Progress, or None where it cannot draw."""
    if factory not in _FRONT_ENDS:
        _FRONT_ENDS.insert(0, factory)


def default_progress(total: int) -> Progress:
    """A registered front end's (the widget inside a Jupyter kernel), a bar in a terminal, nothing otherwise."""
    for factory in _FRONT_ENDS:
        progress = factory(total)
        if progress is not None:
            return progress
    if sys.stderr is not None and sys.stderr.isatty():
        return TerminalProgress(total)
    return Progress(total)
