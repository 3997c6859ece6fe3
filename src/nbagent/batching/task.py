"""One batch task, run to a result row: its own session in its own isolated copy of the workspace.

``run_task`` is a plain top-level function of picklable arguments, so the same code runs in a
local thread and on a Dask worker. It never raises for a task's own failure: a failed task is a
row whose ``error`` says what went wrong, so a batch never loses the tasks that finished.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import socket
import threading
import time
import traceback
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import events as ev
from ..config import BATCH_MODES
from ..errors import StoreError
from ..render.redaction import logger
from ..workspace.state_dir import BATCH, state_dir
from ..store.db import workspace_db_path
from ..store.sessions import SessionStore
from ..knowledge.repomap import RepoMap
from . import scratch
from .isolation import IsolatedCopy, IsolationError, Source, make_copy
from .remote import RemoteSource, batch_copies

log = logger("nbagent.batch")

BATCH_APPROVALS = BATCH_MODES


@dataclass(frozen=True)
class TaskSpec:
    index: int
    prompt: str
    workspace: str
    """The user's workspace (absolute); the task's copy is made under its .nbagent/batch/."""
    batch_id: str
    source: Source | None
    """The snapshot every task of the batch starts from (taken once, by the batch); None when the
    workers clone ``remote`` instead."""
    agent_options: dict[str, Any] = field(default_factory=dict)
    remote: RemoteSource | None = None
    """The git URL and commit the workers clone, when they cannot see ``workspace``. The task's
    session then travels back in its row (compressed) instead of being written to ``workspace``."""
    concurrency: int = 1
    """How many tasks of the batch may run at once: with the copy's size, whether copies fit in RAM."""
    time_limit: float | None = None
    """Seconds the task's turn may take; then it is aborted and its row's reason is "timeout"."""
    after: Callable[[Path, dict[str, Any]], dict[str, Any]] | None = None
    """Called with the copy's workspace and the row once the agent is done, before the copy goes;
    what it returns is added to the row (nbagent.eval runs a task's check here). A top-level
    function (or a partial of one), so that it travels to a Dask worker."""
    followups: tuple[str, ...] = ()
    """Prompts sent after ``prompt``, one turn each, in the same session (a benchmark's questions asked
    in order). Each turn has ``time_limit`` of its own; the row's ``turns`` holds every turn's figures and
    its totals are theirs added up. A turn that does not end "done" ends the task."""

    def copy_dir(self, source: Source, *, ram: bool = True) -> Path:
        """A fresh folder for one attempt: a task rerun after its worker died must not meet the
        copy the dead attempt left behind (the batch removes them all when it ends). In this
        machine's RAM when the running tasks' copies fit there (batching.scratch), else on disk."""
        attempt = uuid.uuid4().hex[:8]
        need = (source.size + scratch.COPY_OVERHEAD) * self.concurrency
        folder = scratch.copies_folder(self.batch_id, need) if ram else None
        if folder is None:
            folder = batch_copies(self.batch_id) if self.remote else batch_dir(Path(self.workspace), self.batch_id)
        return folder / f"task-{self.index:05d}-{attempt}"


def batch_dir(workspace: Path, batch_id: str) -> Path:
    """``<workspace>/.nbagent/batch/<id>``, made private and refused if any level is a link (a hostile
    repository's ``.nbagent`` link must not send the copies, or their removal, elsewhere)."""
    return state_dir(workspace, BATCH, batch_id)


def empty_row(spec: TaskSpec) -> dict[str, Any]:
    return {"task": spec.index, "prompt": spec.prompt, "text": "", "reason": "error", "tool_calls": 0,
            "steps": 0, "input_tokens": 0, "cached_tokens": 0, "output_tokens": 0, "cost": None,
            "files_changed": [], "diff": "", "session_id": None, "error": None, "seconds": 0.0,
            "host": socket.gethostname(), "pid": os.getpid()}


def deny_approval(request: Any) -> str:
    """A batch never waits on a person: whatever would ask is denied."""
    return "deny"


def run_task(spec: TaskSpec) -> dict[str, Any]:
    """Run one task to a row (see ``nbagent.batch``); failures are reported in ``error``."""
    started = time.perf_counter()
    row = empty_row(spec)
    copy = None
    try:
        source = _source(spec, row["host"])
        with COPYING:
            copy = _make_copy(spec, source)
        # Outside the copying slot: while the first task of a process builds the map, the next
        # ones make their copies (and then wait for the map, not for a slot).
        if spec.agent_options.get("repo_map", True) is not False:
            seed_repo_map(source, copy)
        row.update(_run_agent(spec, copy.workspace))
        row["files_changed"], row["diff"] = copy.changes()
        if spec.after is not None:
            row.update(spec.after(copy.workspace, dict(row)))
    except Exception as exc:  # one task's failure is its row, never the batch's end
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["traceback"] = traceback.format_exc(limit=8)
    finally:
        if copy is not None:
            copy.remove()
        row["seconds"] = time.perf_counter() - started
    return row


def _make_copy(spec: TaskSpec, source: Source) -> IsolatedCopy:
    """The task's copy, in RAM if it fits; on disk if that fails (RAM filled by others meanwhile)."""
    dest = spec.copy_dir(source)
    try:
        return make_copy(source, dest)
    except (OSError, IsolationError) as exc:
        if not scratch.in_scratch(dest):
            raise
        log.info("copy in RAM failed (%s); making it on disk", exc)
        shutil.rmtree(dest, ignore_errors=True)
        return make_copy(source, spec.copy_dir(source, ram=False))


COPYING = threading.BoundedSemaphore(max(1, (os.cpu_count() or 2) // 2))
"""Copies made at once in this process: one per two cores. Checkouts made together compete for the
same disk and cores and each takes longer; and tasks started together, all copying, then all
starting their agents and sending their first request at the same instant, stay in lockstep and
queue for the CPU at every step. One at a time on 2 cores staggers them by a copy's few
milliseconds; measured with batches like bench/batch.py's at concurrency 16: 24 tasks/s against 21.7
(medians of 6 runs)."""

_MAPS: dict[tuple[str, str, str], dict[str, Any]] = {}
_MAPS_LOCK = threading.Lock()
MAPS_KEPT = 4


def seed_repo_map(source: Source, copy: IsolatedCopy) -> None:
    """Give the copy the repo map its agent would build first thing, built once per process.

    Every copy of a batch is a checkout of one commit: the same files, hence the same map. The
    first task of a process builds it (the others wait for it); each copy then gets that map's
    cache with its own file times, and the agent's first turn finds the map made instead of
    listing and reading the copy again (40 ms of waiting per task at concurrency 16). Plain
    copies are taken from the live folder task by task, so they build their own.
    """
    if not source.commit:
        return
    key = (str(source.objects), source.commit, copy.workspace.relative_to(copy.root).as_posix())
    try:
        with _MAPS_LOCK:
            data = _MAPS.get(key)
            if data is None:
                built = RepoMap(copy.workspace)
                built.block()
                _MAPS[key] = built.cache_data()
                while len(_MAPS) > MAPS_KEPT:
                    _MAPS.pop(next(iter(_MAPS)))
                return
        RepoMap(copy.workspace).transplant(data)
    except Exception as exc:  # the agent builds its own map then
        log.debug("repo map not seeded for %s: %s", copy.workspace, exc)


def _source(spec: TaskSpec, host: str) -> Source:
    if spec.remote is not None:
        return spec.remote.on_this_machine()
    if spec.source is None or not Path(spec.workspace).is_dir():
        raise FileNotFoundError(f"workspace {spec.workspace} is not reachable from {host}: batch workers "
                                "need it on a shared filesystem, or git_url= a repository they can clone")
    return spec.source


def _run_agent(spec: TaskSpec, workspace: Path) -> dict[str, Any]:
    from ..engine.agent import Agent

    options = dict(spec.agent_options)
    options.setdefault("origin", f"batch:{spec.batch_id}")
    # The copy is thrown away when the task ends and its result is the diff: undo checkpoints of it
    # would be git work (snapshots, refs) for nothing. A caller can still ask for them.
    options.setdefault("checkpoints", False)
    # A copy's state starts empty (.nbagent is never copied): no attached source to poll, so no
    # poller thread and database connection per task.
    options.setdefault("context_poll", False)
    options.setdefault("sweep_temp_files", False)  # a fresh checkout: no write of ours was killed in it
    # What would only be written into the copy, and go with it: the recovery journal of its calls
    # (the task's row reports a failure) and the telemetry line of its turn.
    options.setdefault("recovery_journal", False)
    options.setdefault("telemetry", False)
    agent = Agent(workspace=workspace, approver=deny_approval, session="new", **options)
    turns: list[dict[str, Any]] = []
    try:
        for prompt in (spec.prompt, *spec.followups):
            if turns and turns[-1]["reason"] != "done":
                break  # a follow-up only while every turn before it ended "done"
            started = time.perf_counter()
            turns.append(_turn_row(*_run_turn(agent, prompt, spec.time_limit)))
            turns[-1]["seconds"] = time.perf_counter() - started
        persisted = bool(agent.config.persist)
    finally:
        agent.close()
    out = _totals(turns)
    result_session = out["session_id"]
    if persisted and spec.remote is not None:  # this worker cannot reach the workspace: the client imports it
        with SessionStore(workspace) as store:
            exported = store.export_dict(result_session)
        out["session_export"] = zlib.compress(json.dumps(exported, ensure_ascii=False).encode("utf-8"))
    elif persisted:  # the copy goes away: its session moves into the user's workspace, rows as stored
        store = workspace_store(spec)
        try:
            out["session_id"] = store.move_from(workspace_db_path(workspace), result_session)
        except StoreError:  # not a database as this nbagent makes them: through an export, checked
            with SessionStore(workspace) as copy_store:
                exported = copy_store.export_dict(result_session)
            out["session_id"] = store.import_json(exported)
    return out


def _turn_row(result: Any, timed_out: bool) -> dict[str, Any]:
    usages = [e for e in result.events if isinstance(e, ev.Usage)]
    return {
        "text": result.text, "reason": "timeout" if timed_out else result.reason,
        "tool_calls": len(result.tool_calls), "steps": len(usages),
        "input_tokens": result.usage.get("input_tokens", 0), "output_tokens": result.usage.get("output_tokens", 0),
        "cached_tokens": result.usage.get("cached_tokens", 0),
        "cost": result.usage.get("cost"), "session_id": result.session_id,
        "error": "; ".join(result.errors) or None,
    }


def _totals(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """One turn's row as it is; several: the last turn's answer and end, the counts added up (a
    Usage event's cost is the session's running total: the last one is the task's, and each turn's
    own is the difference)."""
    out = dict(turns[-1])
    if len(turns) > 1:
        for key in ("tool_calls", "steps", "input_tokens", "output_tokens", "cached_tokens"):
            out[key] = sum(t[key] for t in turns)
        out["error"] = "; ".join(t["error"] for t in turns if t["error"]) or None
        before = 0.0
        for turn in turns:
            total = turn["cost"]
            turn["cost"] = None if total is None else total - before
            before = before if total is None else total
        out["turns"] = turns
    return out


def _run_turn(agent: Any, prompt: str, time_limit: float | None) -> tuple[Any, bool]:
    """The turn's RunResult, and whether it ran out of time (then it was aborted: its result is
    what it had done by then, and its session keeps it)."""
    future = agent.submit(prompt)
    try:
        return future.result(time_limit), False
    except concurrent.futures.TimeoutError:
        agent.abort()
        return future.result(ABORT_GRACE), True


ABORT_GRACE = 30.0
"""Seconds an aborted turn has to end (its stream closed, its command killed) before the task fails."""

_STORES: dict[str, SessionStore] = {}
"""By batch id: a batch has one workspace."""
_STORES_LOCK = threading.Lock()


def workspace_store(spec: TaskSpec) -> SessionStore:
    """The user's workspace database, opened once per batch in each process that runs its tasks.

    Every task moves its session there. Opening the database reads its schema and closing the last
    connection checkpoints its log to disk: per task that was about 2 ms of CPU and a disk write each,
    which the tasks of a batch queued for. The connection is shared (``Database`` locks it) and
    closed by ``close_stores`` when the batch ends.
    """
    with _STORES_LOCK:
        store = _STORES.get(spec.batch_id)
        if store is None:
            store = _STORES[spec.batch_id] = SessionStore(Path(spec.workspace))
        return store


def close_stores(batch_id: str) -> None:
    """Close the workspace database this process opened for ``batch_id`` (at the batch's end)."""
    with _STORES_LOCK:
        store = _STORES.pop(batch_id, None)
    if store is not None:
        store.close()


def import_session(workspace: Path, row: dict[str, Any]) -> None:
    """On the client: store a session that came back in a row (git_url batches) in the workspace."""
    exported = row.pop("session_export", None)
    if exported is None:
        return
    with SessionStore(workspace) as store:
        row["session_id"] = store.import_json(zlib.decompress(exported).decode("utf-8"))
