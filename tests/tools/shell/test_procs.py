"""ProcessTracker: whole trees die, TERM-ignoring grandchildren and double forks included."""

from __future__ import annotations

import pytest
import signal
import threading
import time

import psutil

from nbagent.workspace.procs import ProcessRef, ProcessTracker, kill_tree

from .helpers import gone, wait_for_pids, wait_gone

pytestmark = pytest.mark.process

# Three grandchildren that ignore TERM (an ignored signal survives exec), and one
# more that double-forks out of the shell's tree but stays in its process group.
STUBBORN = """
for i in 1 2 3; do (trap '' TERM; echo $BASHPID >> {pids}; exec sleep 300) & done
( (trap '' TERM; echo $BASHPID > {escaped}; exec sleep 300) & )
wait
"""


def test_kill_all_kills_every_process_of_the_tree(tmp_path):
    tracker = ProcessTracker()
    pid_file, escaped_file = tmp_path / "pids", tmp_path / "escaped"
    proc = tracker.popen_shell(STUBBORN.format(pids=pid_file, escaped=escaped_file), tmp_path)
    pids = wait_for_pids(pid_file, 3) + wait_for_pids(escaped_file, 1)
    wait_until(lambda: pids[3] not in [c.pid for c in psutil.Process(proc.pid).children(recursive=True)])

    started = time.monotonic()
    killed = tracker.kill_all()
    elapsed = time.monotonic() - started

    assert killed >= 5  # the shell and four sleeps
    assert proc.wait(timeout=5) < 0  # the shell died of a signal
    assert wait_gone(pids) == []
    assert tracker.was_killed(proc.pid)
    assert tracker.running == []
    assert elapsed < 3.0


def test_kill_all_from_another_thread_while_the_loop_waits(tmp_path):
    tracker = ProcessTracker()
    proc = tracker.popen_shell("sleep 300; true", tmp_path)
    child = wait_for_child(proc.pid)
    threading.Timer(0.2, tracker.kill_all).start()
    assert proc.wait(timeout=5) in (-signal.SIGTERM, 143)
    assert gone(child) and tracker.was_killed(proc.pid)


async def test_spawn_shell_on_the_loop_is_tracked_and_killed(tmp_path):
    tracker = ProcessTracker()
    proc = await tracker.spawn_shell("echo ready; sleep 300; true", tmp_path)
    assert (await proc.stdout.readline()) == b"ready\n"
    assert psutil.Process(proc.pid).terminal() is None  # its own session: no controlling terminal
    child = wait_for_child(proc.pid)  # "ready" is printed before bash forks sleep: wait for it
    assert tracker.kill_all() >= 2
    assert gone(child)
    assert await proc.wait() in (-signal.SIGTERM, 143)


def test_release_hands_a_process_over_and_kill_all_leaves_it(tmp_path):
    tracker = ProcessTracker()
    proc = tracker.popen_shell("sleep 300", tmp_path)
    assert tracker.release(proc.pid) is True
    assert tracker.kill_all() == 0
    assert proc.poll() is None
    kill_tree(ProcessRef.of(proc.pid))
    assert proc.wait(timeout=5) != 0


def test_release_after_kill_all_reports_the_kill(tmp_path):
    tracker = ProcessTracker()
    proc = tracker.popen_shell("sleep 300", tmp_path)
    tracker.kill_all()
    assert tracker.release(proc.pid) is False
    proc.wait(timeout=5)


def test_a_reused_pid_is_never_killed(tmp_path):
    tracker = ProcessTracker()
    proc = tracker.popen_shell("sleep 300", tmp_path)
    stale = ProcessRef(proc.pid, psutil.Process(proc.pid).create_time() - 100)  # "another" process, same pid
    assert kill_tree(stale) == 0
    assert proc.poll() is None
    tracker.kill_all()
    proc.wait(timeout=5)


def test_stdin_is_closed(tmp_path):
    tracker = ProcessTracker()
    proc = tracker.popen_shell("cat; echo status=$?", tmp_path)
    out, _ = proc.communicate(timeout=5)
    assert out == b"status=0\n"  # cat read end-of-file at once instead of waiting for input


def wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


def wait_for_child(pid: int) -> int:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        children = psutil.Process(pid).children()
        if children:
            return children[0].pid
        time.sleep(0.01)
    raise AssertionError("no child appeared")
