"""nbagent's own temporary files: one recognisable name, and a sweep of those a killed write left.

Atomic writes go through a temporary file beside the target, then ``os.replace``.
A process killed between the two leaves the temporary file behind. Its name says
it is nbagent's and which process made it (``.<name>.<pid>-<random>.nbagent-tmp``),
so the sweep at start-up removes exactly those whose process is gone, and never
a file nbagent did not make.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
import time
from pathlib import Path

import psutil

from ..render.redaction import logger

SUFFIX = ".nbagent-tmp"
_NAME = re.compile(r"\..+\.(?:(\d+)-)?[0-9a-f]{8}" + re.escape(SUFFIX))
"""With a pid (this module's names) or without one (what nbagent 0.1 wrote)."""
GRACE_SECONDS = 3600.0
"""A temporary file without a living owner is left alone this long (a slow network disk, a clock skew)."""
MAX_ENTRIES = 200_000
"""The sweep gives up after this many directory entries: a huge workspace is not walked at every start."""
SKIPPED = frozenset({".git", "node_modules", ".venv", "__pycache__"})
log = logger("nbagent")


def temp_path(path: Path) -> Path:
    """Where to write ``path``'s next content before replacing it."""
    return path.parent / f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}"


def is_stale(name: str, mtime: float, now: float) -> bool:
    """A temporary file of nbagent's whose writer is gone (or, without a pid, that is old)."""
    match = _NAME.fullmatch(name)
    if not match:
        return False
    pid = int(match.group(1)) if match.group(1) else None
    if pid is not None and pid != os.getpid() and not psutil.pid_exists(pid):
        return True
    return now - mtime > GRACE_SECONDS and pid != os.getpid()


def sweep(root: Path) -> list[Path]:
    """Remove nbagent's stale temporary files under ``root`` (links are not followed); returns them."""
    removed: list[Path] = []
    now, seen = time.time(), 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED]
        seen += len(dirs) + len(files)
        for name in files:
            if not name.endswith(SUFFIX):
                continue
            path = Path(folder) / name
            try:
                info = path.lstat()
                if is_stale(name, info.st_mtime, now):
                    path.unlink()
                    removed.append(path)
            except OSError:
                continue
        if seen > MAX_ENTRIES:
            break
    if removed:
        log.info("nbagent: removed %d temporary file(s) left by interrupted writes", len(removed))
    return removed


def sweep_in_background(root: Path) -> threading.Thread:
    """``sweep`` on a daemon thread, so a large workspace never delays the agent's start."""
    thread = threading.Thread(target=sweep, args=(Path(root),), name="nbagent-temp-sweep", daemon=True)
    thread.start()
    return thread
