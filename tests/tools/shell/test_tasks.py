"""Background tasks: exit codes written by the shell, 128+N for a killed shell, wait, stop, restart."""

from __future__ import annotations

import contextlib

import os
import re
import signal
import time

import psutil
import pytest

from nbagent.errors import ToolError
from nbagent.workspace.procs import start_shell
from nbagent.tools.tasks import (
    TASKS, TaskManager, task_create, task_get, task_list, task_manager, task_stop, task_wait, wrap_command,
)

from .helpers import wait_for_pids, wait_gone


def created_id(result: str) -> str:
    return result.split()[2]


@pytest.mark.parametrize(
    "command, code",
    [
        ("exit 3", 3),
        ("set -e; false; echo unreachable", 1),
        ("echo a | false", 1),
        ("echo dangling |", 2),  # a syntax error is still recorded
        ("true", 0),
    ],
)
@pytest.mark.process
async def test_exit_codes_are_recorded(ctx, command, code):
    task_id = created_id(task_create(ctx, command))
    out = await task_wait(ctx, task_id, timeout=10)
    assert out.startswith(f"task {task_id} exited with code {code}")
    assert (ctx.workspace.root / ".nbagent" / "tasks" / f"{task_id}.exit").read_text() == f"{code}\n"


@pytest.mark.process
@pytest.mark.parametrize("command, code", [("exit 3", 3), ("set -e; false; echo no", 1), ("echo x |", 2)])
def test_the_shell_writes_its_code_itself(tmp_path, command, code):
    """No waiter at all (nbagent gone): the EXIT trap alone records the status."""
    exit_path = tmp_path / "code"
    start_shell(wrap_command(command, exit_path), tmp_path).wait(timeout=10)
    assert exit_path.read_text() == f"{code}\n"


@pytest.mark.process
def test_a_terminated_shell_writes_143_itself(tmp_path):
    exit_path = tmp_path / "code"
    proc = start_shell(wrap_command("sleep 300; true", exit_path), tmp_path)
    wait_for_sleep_under(proc.pid)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)
    assert exit_path.read_text() == "143\n"


@pytest.mark.process
async def test_a_sigkilled_shell_is_recorded_as_137_by_the_waiter(ctx):
    task_id = created_id(task_create(ctx, "sleep 300; true"))
    task = task_manager(ctx).get(task_id)
    os.kill(task.pid, signal.SIGKILL)  # no trap runs: only the waiter can record it
    out = await task_wait(ctx, task_id, timeout=10)
    assert out.startswith(f"task {task_id} exited with code 137")
    with contextlib.suppress(ProcessLookupError):  # the orphaned sleep, if bash had forked it yet
        os.killpg(task.pid, signal.SIGKILL)


@pytest.mark.process
def test_a_shell_reaped_but_not_yet_recorded_is_not_lost(ctx, monkeypatch):
    """The waiter sets the shell's returncode when it reaps it, then writes the exit file: a look between
    the two said "ended without recording an exit code" (seen once in CI under load). Held there here."""
    import threading

    import nbagent.tools.tasks as tasks_module

    reaped, release = threading.Event(), threading.Event()
    real_write = tasks_module.atomic_write

    def held_write(path, *args, **kwargs):
        if str(path).endswith(".exit"):
            reaped.set()
            release.wait(10)
        return real_write(path, *args, **kwargs)

    monkeypatch.setattr(tasks_module, "atomic_write", held_write)
    task_id = created_id(task_create(ctx, "sleep 300; true"))
    manager = task_manager(ctx)
    task = manager.get(task_id)
    real_running = manager._running

    def killed_between_the_looks(t):  # state() looked for a code already: the shell ran then
        os.kill(task.pid, signal.SIGKILL)
        assert reaped.wait(10), "the waiter did not reap the shell"
        return real_running(t)

    monkeypatch.setattr(manager, "_running", killed_between_the_looks)
    try:
        state = manager.state(task)
        assert (state.status, state.exit_code) == ("exited", 137)
    finally:
        release.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(task.pid, signal.SIGKILL)


@pytest.mark.process
async def test_done_pattern_returns_while_the_task_runs_and_stop_ends_the_tree(ctx, tmp_path):
    pid_file = tmp_path / "pids"
    command = (f"(trap '' TERM; echo $BASHPID >> {pid_file}; exec sleep 300) & "
               "echo booting; sleep 0.3; echo 'Listening on port 8123'; wait")
    task_id = created_id(task_create(ctx, command))
    out = await task_wait(ctx, task_id, timeout=20, done_pattern=r"Listening on port \d+")
    assert out.startswith(f"done_pattern matched 'Listening on port 8123'; task {task_id} is running")
    assert out.rstrip().endswith("booting\nListening on port 8123")

    stubborn = wait_for_pids(pid_file, 1)
    stopped = task_stop(ctx, task_id)
    assert stopped.startswith(f"task {task_id} was stopped by task_stop with code")
    assert wait_gone(stubborn) == []
    assert task_stop(ctx, task_id).startswith("nothing to stop")


@pytest.mark.process
async def test_wait_times_out_and_the_task_keeps_running(ctx):
    task_id = created_id(task_create(ctx, "sleep 300; true"))
    out = await task_wait(ctx, task_id, timeout=0.2, tail_lines=5)
    assert f"task {task_id} is running" in out and "still running after waiting 0.2s" in out
    assert "the log is empty so far" in out
    task_stop(ctx, task_id)


@pytest.mark.process
async def test_get_list_and_cwd(ctx):
    (ctx.workspace.root / "sub").mkdir()
    task_id = created_id(task_create(ctx, "pwd", cwd="sub"))
    await task_wait(ctx, task_id, timeout=10)
    info = task_get(ctx, task_id)
    assert "status: exited" in info and "exit code: 0" in info and "cwd: sub" in info
    assert f"log: .nbagent/tasks/{task_id}.log" in info
    assert (ctx.workspace.root / ".nbagent" / "tasks" / f"{task_id}.log").read_text().strip().endswith("/sub")
    assert re.fullmatch(rf"{task_id}  exited 0  \d+\.\ds  pwd", task_list(ctx))


@pytest.mark.process
async def test_a_new_manager_sees_tasks_from_disk(ctx):
    task_id = created_id(task_create(ctx, "echo hello; sleep 0.2; exit 5"))
    await task_wait(ctx, task_id, timeout=10)
    later = TaskManager(ctx.workspace.state_dir / "tasks", ctx.workspace.root)  # e.g. after a kernel restart
    state = later.state(later.get(task_id))
    assert (state.status, state.exit_code) == ("exited", 5)
    assert later.tail(task_id, 5) == "hello"


def test_bad_ids_and_arguments(ctx):
    with pytest.raises(ToolError, match="not a task id"):
        task_get(ctx, "../../etc/passwd")
    with pytest.raises(ToolError, match="no task t000000"):
        task_get(ctx, "t000000")
    with pytest.raises(ToolError, match="outside the workspace"):
        task_create(ctx, "true", cwd="..")
    with pytest.raises(ToolError, match="empty"):
        task_create(ctx, " ")
    assert task_list(ctx) == "no background tasks"


@pytest.mark.process
async def test_bad_done_pattern(ctx):
    task_id = created_id(task_create(ctx, "true"))
    with pytest.raises(ToolError, match="not a valid regular expression"):
        await task_wait(ctx, task_id, done_pattern="(")


def test_which_task_tools_ask():
    asks = {t.name: t.approval != "never" for t in TASKS.tools}
    assert asks == {"task_create": True, "task_wait": False, "task_get": False, "task_list": False,
                    "task_stop": True}


def wait_for_sleep_under(pid: int) -> None:
    """Until the shell's child has exec'd sleep: before that, it still runs bash's TERM trap."""
    deadline = time.monotonic() + 5
    while [c.name() for c in psutil.Process(pid).children()] != ["sleep"]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
