"""The bash tool: one command, its exit code and its output; a slow one becomes a background task.

The output goes to a task log file from the start rather than a pipe: a
command that leaves a background child (``server &``) then returns when its
shell does, not when the last holder of a pipe lets go, and a command still
running at its timeout is handed over without moving a byte: the same
process keeps writing to the same log, now a task's.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time


from ..errors import CommandKilled, ToolError
from ..workspace.procs import shell_env
from ..workspace.safe_read import open_regular
from .base import function_tool
from .confinement import blocked_hosts_note, confinement
from .context import ToolContext
from .tasks import TaskManager, exit_code_of, task_manager


CAPTURE_LIMIT = 2_000_000
"""Bytes of a finished command's log read into the result; past it, head and tail and the log is kept."""
HANDOVER_TAIL_LINES = 50


async def bash(ctx: ToolContext, command: str, timeout: float | None = None,
               description: str | None = None, outside_sandbox: str | None = None) -> str:
    """Run a bash command in the workspace root; returns its exit code and output (stdout and stderr).

    stdin is closed, so interactive programs fail fast. A command still running at the timeout is
    not killed: it becomes a background task (see task_wait) and the result gives its id and output so far.
    Sandboxed where possible: writes only to the workspace and /tmp; no network.

    Args:
        command: The command (run with `bash -c`).
        timeout: Seconds before the command is handed over to a background task (default 120).
        description: A few words on what the command does, shown to the user.
        outside_sandbox: Why it must leave the sandbox (network, writing elsewhere); asks first.
    """
    if not command.strip():
        raise ToolError("command is empty")
    limit = ctx.config.bash_timeout if timeout is None else float(timeout)
    if limit <= 0:
        raise ToolError("timeout must be a positive number of seconds")
    manager = task_manager(ctx)
    task_id = manager.reserve()
    started = time.time()
    confine = confinement(ctx, (manager.dir,), outside=bool(outside_sandbox), command=command)
    try:
        proc = ctx.processes.popen_shell(manager.wrapped(task_id, command), ctx.workspace.root,
                                         shell_env(), manager.log_path(task_id), confine)
    except OSError as exc:
        manager.discard(task_id)
        raise ToolError(f"could not start bash: {exc}") from None
    try:
        finished = await _wait(proc, limit)
    except asyncio.CancelledError:  # the turn was aborted: the command goes with it
        threading.Thread(target=_kill_and_reap, args=(ctx.processes, proc, manager, task_id), daemon=True).start()
        raise
    if not ctx.processes.release(proc.pid):
        await asyncio.to_thread(proc.wait)  # kill_all is finishing it off in another thread
        manager.discard(task_id)
        raise CommandKilled()
    if finished:
        result = _finished(manager, task_id, proc.returncode) + blocked_hosts_note(confine)
        return result + blocked_note(confine[0]) if confine is not None and proc.returncode else result
    task = manager.adopt(task_id, proc, command, ctx.workspace.root, started, handed_over_by="bash")
    return _handed_over(manager, task.id, limit)


def blocked_note(box) -> str:
    """What a failed sandboxed command's result adds: what the sandbox blocks, and the way out."""
    held = {"network (TCP)": ", the network (except allowed hosts)", "signals": ", signals to other processes",
            "network": ", the network (except allowed hosts)", "processes": ", other processes"}
    blocks = "".join(held.get(c, "") for c in box.confines)
    return (f"\n[sandbox ({box.mechanism}): BLOCKED here are writes outside the workspace and /tmp, secret "
            f"files{blocks} and secret "
            "environment variables; if the error above is one of those and the command needs it, call "
            "again with outside_sandbox and the reason (the user is asked)]")


def _kill_and_reap(processes, proc, manager: TaskManager, task_id: str) -> None:
    """Off the loop: kill the tree (a no-op when kill_all got there first), reap the shell, drop its log."""
    processes.kill(proc.pid)
    proc.wait()
    manager.discard(task_id)


async def _wait(proc, limit: float) -> bool:
    """Poll until the process ends (True) or ``limit`` seconds pass (False), yielding to the loop.

    Polling, not a thread blocked in wait(): a poll can be cancelled, and a
    thread cannot be told to stop waiting when the command is handed over.
    """
    started = time.monotonic()
    deadline = started + limit
    while proc.poll() is None:
        now = time.monotonic()
        if now >= deadline:
            return False
        # 5 ms polls in the first second, where most commands end (a doubling delay would add up to half
        # of a command's time: a sandboxed one takes ~20 ms more to start), then 100 ms ones
        await asyncio.sleep(min(0.005 if now - started < 1.0 else 0.1, deadline - now))
    return True


def _finished(manager: TaskManager, task_id: str, returncode: int) -> str:
    output, kept = _read_output(manager, task_id)
    if not kept:
        manager.discard(task_id)
    else:
        manager.exit_path(task_id).unlink(missing_ok=True)
    code = exit_code_of(returncode)
    head = f"exit code: {code}"
    if returncode < 0:
        head += f" (killed by {_signal_name(-returncode)})"
    return f"{head}\n{output}" if output else f"{head}\n(no output)"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _read_output(manager: TaskManager, task_id: str) -> tuple[str, bool]:
    """The log's text, and whether the log must be kept because the text leaves part of it out."""
    path = manager.log_path(task_id)
    size = path.stat().st_size
    with open_regular(path) as fh:
        if size <= CAPTURE_LIMIT:
            return fh.read().decode("utf-8", errors="replace").rstrip("\n"), False
        head = fh.read(CAPTURE_LIMIT // 2)
        fh.seek(size - CAPTURE_LIMIT // 2)
        tail = fh.read()
    gap = (f"\n[... {size - len(head) - len(tail):,} bytes left out; the whole output is in "
           f"{manager.display_path(path)} ...]\n")
    return (head.decode("utf-8", errors="replace") + gap + tail.decode("utf-8", errors="replace")).rstrip("\n"), True


def _handed_over(manager: TaskManager, task_id: str, limit: float) -> str:
    log = manager.display_path(manager.log_path(task_id))
    tail = manager.tail(task_id, HANDOVER_TAIL_LINES)
    return (
        f"Still running at the {limit:g}s limit: moved to background task {task_id}, not killed.\n"
        f"task_id: {task_id}\n"
        f"Wait for it with task_wait, stop it with task_stop; its whole log is {log}.\n"
        + (f"Output so far (last {HANDOVER_TAIL_LINES} lines at most):\n{tail}" if tail else "No output so far.")
    )


BASH_TOOL = function_tool(
    bash, runs="sandbox",
    prompt_hint="bash: run tests, builds and git commands; slow ones continue as background tasks.",
)
