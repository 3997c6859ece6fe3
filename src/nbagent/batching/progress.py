"""Batch progress: a counter that front ends draw (a bar in a terminal, a widget in Jupyter).

The engine only counts; drawing is a front end's job. In a Jupyter kernel the widget comes from
nbagent.jupyter (loaded only when ipykernel is already running, so the engine never imports it).
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


def default_progress(total: int) -> Progress:
    """A widget inside a Jupyter kernel, a bar in a terminal, nothing otherwise."""
    if "ipykernel" in sys.modules:
        from ..jupyter.batch_progress import WidgetProgress

        return WidgetProgress(total)
    if sys.stderr is not None and sys.stderr.isatty():
        return TerminalProgress(total)
    return Progress(total)
