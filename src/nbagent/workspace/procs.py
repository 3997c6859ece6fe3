"""Child processes and how to kill them: whole trees, process groups included.

Every shell runs ``bash -c`` in a session of its own (so its process group id
is its pid), with stdin closed. Stopping a command kills its whole tree:
killing the shell alone leaves a child holding the output open and the call
hanging (seed 000 saw 19 seconds of that). The tree is collected with psutil
*before* any signal is sent, because a child whose parent died is re-parented
and can no longer be found from the shell; the process group then catches
what a double fork hid from the tree.

The tracker is used from two threads at once: the agent's loop spawns and
waits, a front end's Stop button calls ``kill_all()``; a lock guards its maps.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Mapping

import psutil

if TYPE_CHECKING:
    from .sandbox import Policy, Sandbox

KILL_GRACE = 0.75
"""Seconds between TERM and KILL: long enough for a clean exit, short enough for a Stop button."""


@dataclass(frozen=True)
class ProcessRef:
    """A process we started, identified by pid *and* start time so a reused pid is never mistaken for it."""

    pid: int
    create_time: float | None

    @classmethod
    def of(cls, pid: int) -> "ProcessRef":
        try:
            return cls(pid, psutil.Process(pid).create_time())
        except psutil.Error:
            return cls(pid, None)

    def process(self) -> psutil.Process | None:
        """The live process, or None when it is gone, a zombie, or its pid now belongs to another."""
        try:
            proc = psutil.Process(self.pid)
            if self.create_time is not None and proc.create_time() != self.create_time:
                return None
            return None if proc.status() == psutil.STATUS_ZOMBIE else proc
        except psutil.Error:
            return None

    def alive(self) -> bool:
        return self.process() is not None


def shell_argv(command: str) -> list[str]:
    return ["bash", "-c", command]


def _environment(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """``env`` adds to the inherited environment (None inherits it unchanged)."""
    return None if env is None else {**os.environ, **env}


def confined(argv: list[str], cwd: str | Path, env: Mapping[str, str] | None,
             confine: "tuple[Sandbox, Policy] | None") -> tuple[list[str], dict[str, str] | None]:
    """The argv and environment a command runs with: inside the sandbox (its argv wrapped, the
    environment scrubbed) when ``confine`` is given, else as they are (``env`` added to ours)."""
    if confine is None:
        return argv, _environment(env)
    sandbox, policy = confine
    return sandbox.command(argv, policy, cwd), sandbox.environment(policy, env)


def start_shell(
    command: str, cwd: str | Path, env: Mapping[str, str] | None = None, log_path: str | Path | None = None,
    confine: "tuple[Sandbox, Policy] | None" = None,
) -> subprocess.Popen:
    """Start ``bash -c command`` untracked: its own session, stdin closed, stderr merged into stdout.

    With ``log_path`` the output is appended to that file (a task's log, which
    outlives us); without it the output is a pipe on ``.stdout``. With ``confine`` it runs in the
    sandbox under that policy.
    """
    argv, environment = confined(shell_argv(command), cwd, env, confine)
    log: IO[bytes] | None = open(log_path, "ab") if log_path is not None else None
    try:
        return subprocess.Popen(
            argv, cwd=str(cwd), env=environment, stdin=subprocess.DEVNULL,
            stdout=log if log is not None else subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        if log is not None:
            log.close()  # the child holds its own copy of the descriptor


def kill_tree(ref: ProcessRef, grace: float = KILL_GRACE) -> int:
    """Kill a process, all its descendants and its process group: TERM, then KILL after ``grace``.

    Returns how many processes were signalled. Never reaps the root (its
    parent's waiter needs the exit status), so waiting is done by polling.
    """
    victims = _collect(ref)
    if not victims and not _group_is_ours(ref):
        return 0
    _signal_all(victims, ref, signal.SIGTERM)
    survivors = _wait_gone(victims, grace)
    # A survivor may have forked during the grace: collect again before KILL.
    survivors = _dedupe(survivors + [c for p in survivors for c in _children(p)] + _collect(ref))
    if survivors or _group_is_ours(ref):
        _signal_all(survivors, ref, signal.SIGKILL)
        _wait_gone(survivors, 2.0)
    return len(victims)


def _collect(ref: ProcessRef) -> list[psutil.Process]:
    root = ref.process()
    tree = [root, *_children(root)] if root is not None else []
    return _dedupe(tree + _group_members(ref))


def _children(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def _group_members(ref: ProcessRef) -> list[psutil.Process]:
    """Live processes in the shell's process group (a double fork leaves the tree but not the group)."""
    if not _group_is_ours(ref):
        return []
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == ref.pid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc)
        except (OSError, psutil.Error):
            continue
    return members


def _group_is_ours(ref: ProcessRef) -> bool:
    """True when group ``ref.pid`` can only hold our processes.

    A process group id stays taken while any member lives, so the group is
    ours while its leader is ours, or while no process holds the leader's pid
    (only its leader could have started a new group of that id).
    """
    try:
        os.killpg(ref.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        leader = psutil.Process(ref.pid)
        return ref.create_time is None or leader.create_time() == ref.create_time
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def _signal_all(procs: list[psutil.Process], ref: ProcessRef, sig: signal.Signals) -> None:
    # The group first, in one system call, then the tree from the root down
    # (for children that left the group): a parent signalled after its child
    # could see the child die and start the next command of a chain.
    if _group_is_ours(ref):
        try:
            os.killpg(ref.pid, sig)
        except OSError:
            pass
    for proc in procs:
        try:
            proc.send_signal(sig)
        except psutil.Error:
            pass


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Poll until every process has exited (a zombie counts); return the survivors.

    Hand-written instead of ``psutil.wait_procs``, which reaps our own
    children and would steal the exit status from the waiter that records it.
    """
    deadline = time.monotonic() + timeout
    alive = list(procs)
    while alive:
        alive = [p for p in alive if _running(p)]
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    return alive


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _dedupe(procs: list[psutil.Process]) -> list[psutil.Process]:
    seen: dict[int, psutil.Process] = {}
    for p in procs:
        seen.setdefault(p.pid, p)
    return list(seen.values())


class ProcessTracker:
    """The commands in flight: what Stop (``kill_all``) kills.

    Background tasks are not tracked here (they outlive a Stop and a turn);
    a command handed over to a task leaves through ``release``.
    """

    def __init__(self, grace: float = KILL_GRACE):
        self.grace = grace
        self._lock = threading.Lock()
        self._running: dict[int, ProcessRef] = {}
        self._killed: set[int] = set()
        self._stop_hooks: list[Callable[[], int]] = []
        self._calls = 0  # batches of tool calls in flight
        self._stopped = False  # Stop came while they run: a command they start from now on is killed

    def add_stop_hook(self, hook: Callable[[], int]) -> Callable[[], None]:
        """Also call ``hook()`` on ``kill_all`` (from any thread): it stops work that is not a child
        process of ours, such as an MCP call in flight, and returns how many it stopped."""
        with self._lock:
            self._stop_hooks.append(hook)

        def remove() -> None:
            with self._lock:
                if hook in self._stop_hooks:
                    self._stop_hooks.remove(hook)

        return remove

    def popen_shell(
        self, command: str, cwd: str | Path, env: Mapping[str, str] | None = None,
        log_path: str | Path | None = None, confine: "tuple[Sandbox, Policy] | None" = None,
    ) -> subprocess.Popen:
        """``start_shell`` and track it; wait with the Popen's own ``wait``/``poll``."""
        proc = start_shell(command, cwd, env, log_path, confine)
        self._track(proc.pid)
        return proc

    async def spawn_shell(
        self, command: str, cwd: str | Path, env: Mapping[str, str] | None = None,
        log_path: str | Path | None = None,
    ) -> asyncio.subprocess.Process:
        """Start ``bash -c command`` on the running loop, tracked, in its own session, stdin closed.

        Output (stderr merged) is a pipe on ``.stdout``, or appended to ``log_path``.
        """
        log = open(log_path, "ab") if log_path is not None else None
        try:
            proc = await asyncio.create_subprocess_exec(
                *shell_argv(command), cwd=str(cwd), env=_environment(env), stdin=subprocess.DEVNULL,
                stdout=log if log is not None else subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            if log is not None:
                log.close()
        self._track(proc.pid)
        return proc

    @contextmanager
    def calls_in_flight(self):
        """Around a model response's tool calls: a Stop that comes after the call was shown but before
        its command started (the shell still spawning) still stops it, rather than being lost."""
        with self._lock:
            self._calls += 1
        try:
            yield
        finally:
            with self._lock:
                self._calls -= 1
                if not self._calls:
                    self._stopped = False

    def _track(self, pid: int) -> None:
        ref = ProcessRef.of(pid)
        with self._lock:
            self._killed.discard(pid)  # a reused pid starts with a clean record
            stopped = self._stopped
            if stopped:
                self._killed.add(pid)
            else:
                self._running[pid] = ref
        if stopped:
            kill_tree(ref, self.grace)

    def release(self, pid: int) -> bool:
        """Stop tracking ``pid`` (it ended, or moved to a background task).

        Returns False when it was killed by ``kill_all`` first: the caller then
        reports "killed by the user" instead of handing it over.
        """
        with self._lock:
            self._running.pop(pid, None)
            return pid not in self._killed

    def kill_all(self) -> int:
        """Kill every tracked command's whole tree; returns how many processes were signalled.

        Safe from any thread. Each command is marked killed before any signal,
        so the tool waiting on it reports ``CommandKilled``, never an exit code.
        """
        with self._lock:
            refs = list(self._running.values())
            self._killed.update(r.pid for r in refs)
            self._running.clear()
            hooks = list(self._stop_hooks)
            self._stopped = self._calls > 0
        stopped = sum(hook() for hook in hooks)
        return stopped + sum(kill_tree(ref, self.grace) for ref in refs)

    def kill(self, pid: int) -> int:
        """Kill one tracked command's tree (an aborted call); 0 when it is not tracked."""
        with self._lock:
            ref = self._running.pop(pid, None)
            if ref is not None:
                self._killed.add(pid)
        return kill_tree(ref, self.grace) if ref is not None else 0

    def was_killed(self, pid: int) -> bool:
        with self._lock:
            return pid in self._killed

    @property
    def running(self) -> list[int]:
        with self._lock:
            return list(self._running)


def shell_env() -> dict[str, str]:
    """What every command gets on top of the inherited environment.

    No pager and no credential prompt (stdin is closed: they would only
    hang), unbuffered Python so a handed-over task's log shows progress, and
    no colour codes to spend tokens on. Inside a kernel, matplotlib's inline
    backend would be inherited by scripts that cannot show it.
    """
    env = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "PYTHONUNBUFFERED": "1",
           "NO_COLOR": "1"}
    if os.environ.get("MPLBACKEND", "").startswith("module://"):
        env["MPLBACKEND"] = "Agg"
    return env
