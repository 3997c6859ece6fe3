"""The bash tool: exit code and output, Stop, hand-over to a background task at the timeout."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from nbagent.errors import CommandKilled, ToolError
from nbagent.tools.shell import BASH_TOOL, bash
from nbagent.tools.tasks import task_wait

from .helpers import wait_for_pids, wait_gone


@pytest.mark.process
async def test_exit_code_and_both_streams(ctx):
    out = await bash(ctx, "echo out; echo err >&2; exit 4")
    # a failed command run in the sandbox also says what the sandbox blocks (issue 35)
    assert out.startswith("exit code: 4\nout\nerr")
    assert out == "exit code: 4\nout\nerr" or out.split("\n")[3].startswith("[sandbox (")


@pytest.mark.process
async def test_runs_in_the_workspace_root_and_leaves_no_log(ctx):
    out = await bash(ctx, "pwd")
    assert out == f"exit code: 0\n{ctx.workspace.root}"
    assert list((ctx.workspace.root / ".nbagent" / "tasks").iterdir()) == []


@pytest.mark.process
async def test_a_background_child_does_not_hold_the_call(ctx, tmp_path):
    started = time.monotonic()
    out = await bash(ctx, f"sleep 30 & echo $! > {tmp_path / 'pid'}; echo started")
    assert out == "exit code: 0\nstarted"
    assert time.monotonic() - started < 5
    (orphan,) = wait_for_pids(tmp_path / "pid", 1)
    os.kill(orphan, signal.SIGTERM)  # it was meant to outlive the call; end it here


@pytest.mark.process
async def test_stop_kills_the_tree_and_raises_command_killed(ctx, tmp_path):
    pid_file = tmp_path / "pids"
    command = f"(trap '' TERM; echo $BASHPID >> {pid_file}; exec sleep 300) & sleep 300; echo never"
    call = asyncio.create_task(bash(ctx, command))
    pids = await asyncio.to_thread(wait_for_pids, pid_file, 1)
    killed = await asyncio.to_thread(ctx.processes.kill_all)  # a front end's Stop, on another thread
    with pytest.raises(CommandKilled, match="killed by the user"):
        await call
    assert killed >= 3
    assert wait_gone(pids) == []


@pytest.mark.process
async def test_a_long_command_is_handed_over_and_task_wait_gets_its_code(ctx):
    out = await bash(ctx, "echo first; sleep 1.5; echo second; exit 6", timeout=0.5)
    assert out.startswith("Still running at the 0.5s limit: moved to background task")
    assert "first" in out and "second" not in out
    task_id = out.split("task_id: ")[1].split()[0]
    assert ctx.processes.running == []  # Stop no longer touches it: it is a task now

    waited = await task_wait(ctx, task_id, timeout=10)
    assert waited.startswith(f"task {task_id} exited with code 6")
    assert waited.rstrip().endswith("first\nsecond")
    assert (ctx.workspace.root / ".nbagent" / "tasks" / f"{task_id}.exit").read_text() == "6\n"


@pytest.mark.process
async def test_cancelling_the_call_kills_the_command(ctx, tmp_path):
    pid_file = tmp_path / "pids"
    call = asyncio.create_task(bash(ctx, f"echo $$ > {pid_file}; sleep 300; true"))
    pids = await asyncio.to_thread(wait_for_pids, pid_file, 1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.to_thread(wait_gone, pids) == []


async def test_bad_arguments(ctx):
    with pytest.raises(ToolError, match="empty"):
        await bash(ctx, "   ")
    with pytest.raises(ToolError, match="positive"):
        await bash(ctx, "true", timeout=0)


def test_bash_asks_before_running():
    assert BASH_TOOL.approval == "ask" and not BASH_TOOL.read_only and BASH_TOOL.is_async
    assert set(BASH_TOOL.parameters["properties"]) == {"command", "timeout", "description", "outside_sandbox"}
    assert BASH_TOOL.parameters["required"] == ["command"]
