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
    """The pids the command under test wrote to ``path``, once ``count`` of them are there, as this
    process sees them: a sandboxed command (its own pid namespace) writes the pids of its namespace,
    found here by their namespace pid and their working directory (the folder of ``path``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(x) for x in path.read_text().split()]
            if len(pids) >= count:
                return [_host_pid(pid, path.parent) for pid in pids]
        time.sleep(0.02)
    raise AssertionError(f"the command wrote fewer than {count} pids to {path}")


def _host_pid(pid: int, cwd: Path) -> int:
    """``pid`` itself when it is one of this namespace's, else the process whose innermost namespace pid
    it is and whose working directory is ``cwd``."""
    for proc in psutil.process_iter():
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
            nspid = next(line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:"))
            if len(nspid) > 1 and int(nspid[-1]) == pid and Path(proc.cwd()) == cwd:
                return proc.pid
        except (OSError, StopIteration, psutil.Error):
            continue
    return pid


def wait_gone(pids: list[int], timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(gone(p) for p in pids):
        time.sleep(0.02)
    return [p for p in pids if not gone(p)]
