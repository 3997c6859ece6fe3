"""A child process for the kill tests: its stdout lines are read on a thread (so the pipe never fills)
and kept as split words; the test waits for a line it names, then SIGKILLs the child."""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Callable


class KillableChild:
    def __init__(self, argv: list[str], until: Callable[[list[str]], bool] = lambda words: False):
        """Start ``argv``; ``reached`` is set when a line satisfies ``until`` (or the output ends)."""
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[list[str]] = []
        self.ready = threading.Event()  # the first line that starts with "ready"
        self.reached = threading.Event()
        self._until = until
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            words = line.split()
            if not words:
                continue
            self.lines.append(words)
            if words[0] == "ready":
                self.ready.set()
            if self._until(words):
                self.reached.set()
        self.reached.set()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._reader.join(5)

    def first(self, word: str) -> str | None:
        """The second word of the first line that starts with ``word``."""
        return next((words[1] for words in self.lines if words[0] == word and len(words) > 1), None)
