"""Background tasks: commands that outlive the call (and the turn) that started them.

A task is a ``bash -c`` in its own session whose output goes to
``.nbagent/tasks/<id>.log``. Its exit code lands in ``<id>.exit``, written by
the shell itself through an EXIT trap, so ``exit N``, a ``set -e`` failure
and a syntax error are recorded even when nbagent is gone by then; while
nbagent runs, a waiter thread also records the code, as 128+N for a shell
killed by signal N (a SIGKILLed shell runs no trap). ``<id>.json`` holds
the rest (command, cwd, pid, times).

Where the manager lives: ``ctx.state.tasks`` when the session state carries
a TaskManager, else one shared manager per workspace root
(``TaskManager.for_workspace``). Either way the files are the truth, so a
manager made later (after a kernel restart) still lists, waits for and stops
the tasks of an earlier one.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from ..render.escape import truncate
from ..workspace.atomic import atomic_write
from ..errors import ToolError
from ..workspace.procs import ProcessRef, kill_tree, shell_env, start_shell
from ..workspace.safe_read import open_regular, read_bytes
from ..workspace.state_dir import TASKS as TASKS_DIR
from .base import ToolSet, function_tool
from .confinement import confinement
from .context import ToolContext

if TYPE_CHECKING:
    from ..workspace.root import Workspace
    from .confinement import Confinement

TASK_ID = re.compile(r"t[0-9a-f]{6}")
FINISHED_KEEP_SECONDS = 14 * 24 * 3600
"""Finished tasks' files are swept this long after they ended (seed 002's 14 days)."""
ORPHAN_LOG_SECONDS = 24 * 3600
"""A log with no task record (a bash call cut short by a dying kernel) is swept after a day."""
WAIT_DEFAULT, WAIT_MAX = 30.0, 600.0
TAIL_DEFAULT, TAIL_MAX = 20, 100


def exit_code_of(returncode: int) -> int:
    """Popen's returncode (-N for signal N) as a shell reports it: 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def wrap_command(command: str, exit_path: Path) -> str:
    """The script that runs ``command`` and writes its exit status to ``exit_path``.

    ``eval`` of the quoted command (instead of the command as the script)
    makes a syntax error, such as a trailing ``|``, a failure the trap still
    records. Trapping HUP, INT and TERM turns them into ``exit 128+N`` so the
    EXIT trap writes the conventional code rather than the last command's.
    """
    record = f"echo $? >| {shlex.quote(str(exit_path))}"
    return (
        f"trap {shlex.quote(record)} EXIT\n"
        "trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM\n"
        f"eval {shlex.quote(command)}\n"
    )


@dataclass
class Task:
    id: str
    command: str
    cwd: str
    """Workspace-relative directory the command started in."""
    pid: int | None = None
    create_time: float | None = None
    started_at: float = 0.0
    handed_over_by: str | None = None
    """"bash" when a bash call reached its timeout and handed the command over."""
    stopped_at: float | None = None
    ended_at: float | None = None


@dataclass
class TaskState:
    status: str
    """running, exited, stopped (by task_stop) or lost (ended and no exit code was recorded)."""
    exit_code: int | None = None
    elapsed: float = 0.0


class TaskManager:
    """The tasks of one workspace, kept as files under ``tasks/`` in the state directory."""

    _shared: dict[str, "TaskManager"] = {}
    _shared_lock = threading.Lock()

    def __init__(self, tasks_dir: Path, root: Path):
        self.dir = Path(tasks_dir)
        self.root = Path(root)
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._own: dict[str, Task] = {}
        self._procs: dict[str, subprocess.Popen] = {}
        self._waiters: dict[str, threading.Thread] = {}
        self._sweep()

    @classmethod
    def for_workspace(cls, workspace: "Workspace") -> "TaskManager":
        key = str(workspace.root)
        with cls._shared_lock:
            if key not in cls._shared:
                cls._shared[key] = cls(_tasks_dir(workspace), workspace.root)
            return cls._shared[key]

    # Paths ----------------------------------------------------------------
    def log_path(self, task_id: str) -> Path:
        return self.dir / f"{task_id}.log"

    def exit_path(self, task_id: str) -> Path:
        return self.dir / f"{task_id}.exit"

    def _record_path(self, task_id: str) -> Path:
        return self.dir / f"{task_id}.json"

    def display_path(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    # Starting -------------------------------------------------------------
    def reserve(self) -> str:
        """Claim a fresh id by creating its empty log exclusively (safe across processes)."""
        while True:
            task_id = "t" + os.urandom(3).hex()
            try:
                os.close(os.open(self.log_path(task_id), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                return task_id
            except FileExistsError:
                continue

    def wrapped(self, task_id: str, command: str) -> str:
        return wrap_command(command, self.exit_path(task_id))

    def create(self, command: str, cwd: Path, env: Mapping[str, str] | None = None,
               confine: "Confinement | None" = None) -> Task:
        """Start ``command`` as a task; ``confine`` (nbagent.tools.confinement) runs it in the sandbox."""
        task_id = self.reserve()
        started = time.time()
        try:
            proc = start_shell(self.wrapped(task_id, command), cwd, env, self.log_path(task_id), confine)
        except OSError:
            self.discard(task_id)
            raise
        return self.adopt(task_id, proc, command, cwd, started)

    def adopt(
        self, task_id: str, proc: subprocess.Popen, command: str, cwd: Path, started_at: float,
        handed_over_by: str | None = None,
    ) -> Task:
        """Make a running process (already writing to this id's log) a task, and watch it."""
        ref = ProcessRef.of(proc.pid)
        task = Task(task_id, command, self.display_path(Path(cwd)) or ".", proc.pid, ref.create_time,
                    started_at, handed_over_by)
        with self._lock:
            self._own[task_id] = task
            self._procs[task_id] = proc
            self._save(task)
        waiter = threading.Thread(target=self._watch, args=(task_id, proc), daemon=True,
                                  name=f"nbagent-task-{task_id}")
        self._waiters[task_id] = waiter
        waiter.start()
        return task

    def discard(self, task_id: str) -> None:
        """Forget a reserved id whose command finished inside its call."""
        for path in (self.log_path(task_id), self.exit_path(task_id)):
            path.unlink(missing_ok=True)

    def _watch(self, task_id: str, proc: subprocess.Popen) -> None:
        # The shell's trap wrote its status already, except when a signal
        # killed it; the waiter's code is the shell's true status either way.
        code = exit_code_of(proc.wait())
        atomic_write(self.exit_path(task_id), f"{code}\n", private=True)
        with self._lock:
            self._own[task_id].ended_at = time.time()
            self._save(self._own[task_id])

    # Reading --------------------------------------------------------------
    def get(self, task_id: str) -> Task:
        if not TASK_ID.fullmatch(task_id or ""):
            raise ToolError(f"{task_id!r} is not a task id (they look like t1a2b3c); task_list shows them")
        with self._lock:
            if task_id in self._own:
                return self._own[task_id]
        try:
            return Task(**json.loads(read_bytes(self._record_path(task_id))[0]))
        except FileNotFoundError:
            raise ToolError(f"no task {task_id}; task_list shows the tasks of this workspace") from None
        except (ValueError, TypeError) as exc:
            raise ToolError(f"task {task_id}'s record is unreadable: {exc}") from None

    def list(self) -> list[Task]:
        tasks = []
        for path in self.dir.glob("t*.json"):
            try:
                tasks.append(self.get(path.stem))
            except ToolError:
                continue
        return sorted(tasks, key=lambda t: t.started_at)

    def state(self, task: Task) -> TaskState:
        code = self._exit_code(task)
        if code is None and self._running(task):
            return TaskState("running", None, time.time() - task.started_at)
        # Asked again: the trap may have just written it, or the waiter reaped the shell between the two
        # looks above (its returncode is set before it writes the file: read as "lost" once under load).
        code = code if code is not None else self._exit_code(task)
        ended = task.ended_at or _mtime(self.exit_path(task.id)) or time.time()
        status = "stopped" if task.stopped_at else ("exited" if code is not None else "lost")
        return TaskState(status, code, max(0.0, ended - task.started_at))

    def _exit_code(self, task: Task) -> int | None:
        proc = self._procs.get(task.id)
        if proc is not None and proc.returncode is not None:
            return exit_code_of(proc.returncode)
        return self._read_exit(task.id)

    def _running(self, task: Task) -> bool:
        proc = self._procs.get(task.id)
        if proc is not None:
            return proc.returncode is None
        return task.pid is not None and ProcessRef(task.pid, task.create_time).alive()

    def _read_exit(self, task_id: str) -> int | None:
        try:
            return int(read_bytes(self.exit_path(task_id), max_bytes=64)[0].strip())
        except (OSError, ValueError):
            return None  # not written yet, or being written by the trap

    def tail(self, task_id: str, lines: int) -> str:
        return _tail(self.log_path(task_id), lines)

    # Stopping and waiting -------------------------------------------------
    def stop(self, task_id: str) -> TaskState:
        task = self.get(task_id)
        if self.state(task).status != "running":
            return self.state(task)
        with self._lock:
            task.stopped_at = time.time()
            self._save(task)
        if task.pid is not None:  # a running task has its pid (the trap writes it at start)
            kill_tree(ProcessRef(task.pid, task.create_time))
        if task_id in self._waiters:
            self._waiters[task_id].join(timeout=5)
        return self.state(task)

    def stop_all(self) -> int:
        """Stop every running task this manager started (for an agent that closes and takes its tasks)."""
        running = [t.id for t in list(self._own.values()) if self.state(t).status == "running"]
        for task_id in running:
            self.stop(task_id)
        return len(running)

    async def wait(self, task_id: str, timeout: float, done_pattern: re.Pattern | None) -> tuple[TaskState, str | None]:
        """Wait until the task ends, its log matches ``done_pattern``, or ``timeout`` passes.

        Returns the state and the matched text. The log is read incrementally,
        keeping a few KB of overlap so a match across two reads is not missed.
        """
        task = self.get(task_id)
        deadline = time.monotonic() + timeout
        offset, delay = 0, 0.02
        while True:
            state = self.state(task)
            if done_pattern is not None:
                match, offset = _search_log(self.log_path(task_id), done_pattern, offset)
                if match is not None:
                    return state, match
            if state.status != "running" or time.monotonic() >= deadline:
                return state, None
            await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 0.25)

    # Housekeeping ---------------------------------------------------------
    def _save(self, task: Task) -> None:
        atomic_write(self._record_path(task.id), json.dumps(asdict(task), indent=1), private=True)

    def _sweep(self) -> None:
        """Remove finished tasks' files after two weeks and orphaned bash logs after a day."""
        now = time.time()
        for log in self.dir.glob("t*.log"):
            if not TASK_ID.fullmatch(log.stem):
                continue  # not a name nbagent made: never delete it
            task_id, record = log.stem, self._record_path(log.stem)
            ended = _mtime(self.exit_path(task_id))
            stale = (not record.exists() and now - (_mtime(log) or now) > ORPHAN_LOG_SECONDS) or (
                record.exists() and ended is not None and now - ended > FINISHED_KEEP_SECONDS
            )
            if stale:
                for path in (log, record, self.exit_path(task_id)):
                    path.unlink(missing_ok=True)


TASK_ID = re.compile(r"t[0-9a-f]{6}")
"""The ids ``reserve`` makes; the sweep only ever removes files named after one."""


def _tasks_dir(workspace: "Workspace") -> Path:
    """.nbagent/tasks, or a fresh private temp folder (this process only) when the workspace cannot hold it."""
    found = workspace.state_subdir(TASKS_DIR)
    if found is not None:
        return found
    folder = Path(tempfile.mkdtemp(prefix="nbagent-tasks-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # no other process could find it: not left behind
    return folder


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _tail(path: Path, lines: int, chunk: int = 64 * 1024) -> str:
    """The last ``lines`` lines of a log, reading only its end (logs can be huge)."""
    try:
        with open_regular(path) as fh:  # a FIFO planted as a log is refused, not waited on
            size = fh.seek(0, os.SEEK_END)
            data = b""
            while size > 0 and data.count(b"\n") <= lines:
                step = min(chunk, size)
                size -= step
                fh.seek(size)
                data = fh.read(step) + data
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return "\n".join(text.rstrip("\n").split("\n")[-lines:]) if text.strip() else ""


def _search_log(path: Path, pattern: re.Pattern, offset: int, overlap: int = 4096) -> tuple[str | None, int]:
    try:
        with open_regular(path) as fh:  # a FIFO planted as a log is refused, not waited on
            fh.seek(max(0, offset - overlap))
            data = fh.read()
    except OSError:
        return None, offset
    match = pattern.search(data.decode("utf-8", errors="replace"))
    return (match.group(0) if match else None), max(0, offset - overlap) + len(data)


def task_manager(ctx: ToolContext) -> TaskManager:
    tasks = getattr(ctx.state, "tasks", None)
    return tasks if isinstance(tasks, TaskManager) else TaskManager.for_workspace(ctx.workspace)


def format_duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else (f"{minutes}m{secs:02d}s" if minutes else f"{secs}s")


def describe(manager: TaskManager, task: Task, state: TaskState) -> str:
    """One line: what the task is doing or how it ended."""
    if state.status == "running":
        return f"task {task.id} is running ({format_duration(state.elapsed)} so far)"
    code = f" with code {state.exit_code}" if state.exit_code is not None else ""
    how = {"exited": "exited", "stopped": "was stopped by task_stop",
           "lost": "ended without recording an exit code"}[state.status]
    return f"task {task.id} {how}{code} after {format_duration(state.elapsed)}"


# The tools -----------------------------------------------------------------


def task_create(ctx: ToolContext, command: str, cwd: str | None = None, outside_sandbox: str | None = None) -> str:
    """Start a long-running command (a server, a watcher, a long build) in the background and return at once.

    Its output goes to a log under .nbagent/tasks/; end it with task_stop.
    The task outlives this turn.

    Args:
        command: The bash command to run.
        cwd: Directory to run in (default: the root).
        outside_sandbox: As for bash.
    """
    if not command.strip():
        raise ToolError("command is empty")
    directory = ctx.workspace.resolve(cwd) if cwd else ctx.workspace.root
    if not directory.is_dir():
        raise ToolError(f"cwd {cwd!r} is not a directory")
    manager = task_manager(ctx)
    task = manager.create(command, directory, shell_env(),
                          confinement(ctx, (manager.dir,), outside=bool(outside_sandbox), command=command))
    return (
        f"started task {task.id} (pid {task.pid}) in {task.cwd}\n"
        f"log: {manager.display_path(manager.log_path(task.id))}\n"
        f"Follow it with task_wait (done_pattern returns as soon as the log matches); stop it with task_stop."
    )


async def task_wait(
    ctx: ToolContext, id: str, timeout: float | None = None, tail_lines: int | None = None,
    done_pattern: str | None = None,
) -> str:
    """Wait for a background task to end, then show its state and log tail.

    Args:
        id: The task id (from task_create, a handed-over bash call, or task_list).
        timeout: Seconds to wait (default 30, at most 600); the task keeps running after.
        tail_lines: Lines of the log's end to show (default 20, at most 100).
        done_pattern: A Python regex (multiline): return once the log matches it, e.g. "Listening on|ERROR".
    """
    manager = task_manager(ctx)
    wait_for = WAIT_DEFAULT if timeout is None else min(max(float(timeout), 0.0), WAIT_MAX)
    lines = TAIL_DEFAULT if tail_lines is None else min(max(int(tail_lines), 1), TAIL_MAX)
    try:
        pattern = re.compile(done_pattern, re.MULTILINE) if done_pattern else None
    except re.error as exc:
        raise ToolError(f"done_pattern is not a valid regular expression: {exc}") from None
    task = manager.get(id)
    state, matched = await manager.wait(id, wait_for, pattern)
    head = describe(manager, task, state)
    if matched is not None:
        head = f"done_pattern matched {matched[:200]!r}; {head}"
    elif state.status == "running":
        head = f"{head}; still running after waiting {format_duration(wait_for)}"
    return _report(manager, task, head, lines)


def task_get(ctx: ToolContext, id: str) -> str:
    """Show a background task's command, state, exit code, times and log path (read the log with read_file).

    Args:
        id: The task id.
    """
    manager = task_manager(ctx)
    task = manager.get(id)
    state = manager.state(task)
    log = manager.log_path(task.id)
    rows = [
        describe(manager, task, state),
        f"command: {task.command}",
        f"cwd: {task.cwd}",
        f"status: {state.status}",
        f"exit code: {state.exit_code if state.exit_code is not None else '-'}",
        f"pid: {task.pid}",
        f"started: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(task.started_at))}",
        f"log: {manager.display_path(log)} ({_size(log):,} bytes)",
    ]
    if task.handed_over_by:
        rows.append(f"handed over by: {task.handed_over_by} (it reached its timeout)")
    return "\n".join(rows)


def task_list(ctx: ToolContext) -> str:
    """List this workspace's background tasks: id, state, run time and command."""
    return task_table(task_manager(ctx))


def task_table(manager: "TaskManager") -> str:
    """One line per task (id, state, exit code, run time, command); the /tasks command shows it too."""
    tasks = manager.list()
    if not tasks:
        return "no background tasks"
    rows = []
    for task in tasks:
        state = manager.state(task)
        code = f" {state.exit_code}" if state.exit_code is not None else ""
        command = truncate(task.command, 80)
        rows.append(f"{task.id}  {state.status}{code}  {format_duration(state.elapsed)}  {command}")
    return "\n".join(rows)


def task_stop(ctx: ToolContext, id: str) -> str:
    """Stop a background task and its whole process tree.

    Args:
        id: The task id.
    """
    manager = task_manager(ctx)
    task = manager.get(id)
    before = manager.state(task)
    if before.status != "running":
        return f"nothing to stop: {describe(manager, task, before)}"
    return _report(manager, task, describe(manager, task, manager.stop(id)), 10)


def _report(manager: TaskManager, task: Task, head: str, lines: int) -> str:
    log = manager.log_path(task.id)
    tail = manager.tail(task.id, lines)
    body = f"last {lines} lines of the log:\n{tail}" if tail else "the log is empty so far"
    return f"{head}\ncommand: {task.command}\nlog: {manager.display_path(log)}\n{body}"


TASKS = ToolSet(
    "tasks",
    [
        function_tool(task_create, runs="sandbox",
                      prompt_hint="task_create: start servers, watchers and long builds in the background."),
        function_tool(task_wait, read_only=True,
                      prompt_hint="task_wait: follow a background task; done_pattern returns when its log matches."),
        function_tool(task_get, read_only=True),
        function_tool(task_list, read_only=True),
        function_tool(task_stop, read_only=False),
    ],
    description="Background tasks: commands that outlive the call and the turn.",
)
