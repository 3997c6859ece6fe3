"""Process helpers for the tests: wait for pids to appear, check they are gone."""

from __future__ import annotations

import time
from pathlib import Path

import psutil


def gone(pid: int) -> bool:
    """True when ``pid`` has exited (a zombie waiting for its reaper counts as exited)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_for_pids(path: Path, count: int, timeout: float = 5.0) -> list[int]:
    """The pids the command under test wrote to ``path``, once ``count`` of them are there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(x) for x in path.read_text().split()]
            if len(pids) >= count:
                return pids
        time.sleep(0.02)
    raise AssertionError(f"the command wrote fewer than {count} pids to {path}")


def wait_gone(pids: list[int], timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(gone(p) for p in pids):
        time.sleep(0.02)
    return [p for p in pids if not gone(p)]
