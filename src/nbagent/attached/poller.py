"""The poller: one background thread per workspace, across processes, that refreshes command and file sources.

Every ``tick`` seconds (5) it tries a non-blocking ``flock`` on ``.nbagent/context-poller.lock``; the
process holding it keeps it while its poller lives, so two kernels on one workspace run commands once.
When the holder exits, the OS frees the lock and the next tick of another process takes over. A command
source runs (only once the user approved its command for this workspace: nbagent.workspace.trust) when
its last try is older than its interval (``every``, floored at ``min_every``, 30 s);
a watched file is read every tick. A session's own sources are polled while the session is in use
(used in the last day), the workspace's always. The poller writes only snapshots: it emits no events, holds no
agent busy and never waits for a turn, nor a turn for it.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

from ..render.redaction import logger
from ..store.db import Database, workspace_db_path
from ..workspace.root import Workspace
from .fetch import COMMAND_TIMEOUT, refresh
from .records import Source
from .store import ContextStore

log = logger("nbagent.context")
TICK = 5.0
MIN_EVERY = 30.0
LOCK_NAME = "context-poller.lock"
ACTIVE_SESSION_SECONDS = 24 * 3600.0
"""A session's own command and file sources are polled while it was used in the last day; after that
they wait (their snapshot stays) until the session is used again."""


class Poller:
    def __init__(self, root: str | Path, *, tick: float = TICK, min_every: float = MIN_EVERY,
                 timeout: float = COMMAND_TIMEOUT):
        self.workspace = Workspace(root)
        self.tick, self.min_every, self.timeout = tick, min_every, timeout
        self._stop = threading.Event()
        self._lock_file = None
        self._thread: threading.Thread | None = None
        self._store: ContextStore | None = None

    @property
    def holds_lock(self) -> bool:
        return self._lock_file is not None

    def start(self) -> "Poller":
        self._thread = threading.Thread(target=self._run, name="nbagent-context-poller", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop ticking. A command still running is left to finish on the daemon thread (a closing agent
        does not wait for it); the lock and the database go with the thread's end or the process's."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(2)
            if thread.is_alive():
                return
        self._release()
        if self._store is not None:
            self._store.db.close()
            self._store = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.try_lock():
                    self.poll_once()
            except Exception:  # a broken source or a locked database must not end the poller
                log.exception("context poller pass failed")
            self._stop.wait(self.tick)
        self._release()

    def try_lock(self) -> bool:
        """Hold the workspace's poller lock (non-blocking); True while this process is the poller."""
        if self._lock_file is not None:
            return True
        path = self.workspace.state_dir / LOCK_NAME
        handle = open(path, "a+b")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._lock_file = handle
        return True

    def _release(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()  # closing the descriptor drops the flock
            self._lock_file = None

    def store(self) -> ContextStore:
        if self._store is None:
            self._store = ContextStore(Database(workspace_db_path(self.workspace.root)))
        return self._store

    def poll_once(self, now: float | None = None) -> dict[str, str]:
        """Refresh every due source; returns name -> "new", "same", "error", "gone" or "needs approval" (a
        command the user has not approved for this workspace: not run) for those due."""
        store, done = self.store(), {}
        moment = time.time() if now is None else now
        for source in store.polled(active_since=moment - ACTIVE_SESSION_SECONDS):
            if self._stop.is_set():
                break
            if not self.due(source, moment):
                continue
            done[source.name] = self._refresh(store, source)
        return done

    def due(self, source: Source, now: float) -> bool:
        checked = source.snapshot.checked_at if source.snapshot else None
        if checked is None:
            return True
        interval = self.tick if source.kind == "file" else max(source.every or self.min_every, self.min_every)
        return now - checked >= interval

    def _refresh(self, store: ContextStore, source: Source) -> str:
        fetched = refresh(source, self.workspace, timeout=self.timeout,
                          env={"NBAGENT_CONTEXT_POLLER": str(os.getpid())})
        if fetched.needs_approval:  # stored, never run: the source's status says "needs approval"
            return "needs approval"
        if fetched.output is not None:
            return store.record(source.scope, source.name, fetched.output)
        store.record_error(source.scope, source.name, fetched.error or "failed")
        return "error"


_POLLERS: dict[Path, tuple[Poller, int]] = {}
_POLLERS_LOCK = threading.Lock()


def acquire(root: str | Path, **settings) -> Poller:
    """This process's poller for the workspace at ``root``, started on first use and shared by its agents."""
    key = Path(root).expanduser().resolve()
    with _POLLERS_LOCK:
        poller, users = _POLLERS.get(key, (None, 0))
        if poller is None:
            poller = Poller(key, **settings).start()
        _POLLERS[key] = (poller, users + 1)
        return poller


def release(poller: Poller) -> None:
    """One agent is done with ``poller``; the last one stops it (and frees the workspace's lock)."""
    key = poller.workspace.root
    with _POLLERS_LOCK:
        current, users = _POLLERS.get(key, (None, 0))
        if current is not poller:
            return
        if users > 1:
            _POLLERS[key] = (poller, users - 1)
            return
        del _POLLERS[key]
    poller.stop()
