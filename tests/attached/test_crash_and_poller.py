"""Real crashes and real processes: at-least-once delivery across a killed process, one poller per workspace."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from nbagent import Agent
from nbagent import events as ev
from nbagent.store.sessions import SessionStore
from nbagent.testing.scripted import ScriptedModel

pytestmark = pytest.mark.process

CRASHING = textwrap.dedent("""
    import os, sys
    from nbagent import Agent
    from nbagent.attached.store import ContextStore
    from nbagent.store.backend import SqliteBackend
    from nbagent.testing.scripted import ScriptedModel

    where = sys.argv[2]
    agent = Agent(workspace=sys.argv[1], model=ScriptedModel(["never said"]), context_poll=False)
    agent.context.push("build", "build 41 passed")
    print(agent.session_id, flush=True)
    if where == "after-save":      # the note is stored, what was seen is not
        ContextStore.commit_seen = lambda *a, **k: os._exit(3)
    else:                          # the process dies while the note is being stored
        real = SqliteBackend.append_messages
        def dying(self, session_id, start, messages, turn):
            if any(m.get("note_id") for m in messages):
                os._exit(3)
            return real(self, session_id, start, messages, turn)
        SqliteBackend.append_messages = dying
    agent.run("first prompt")
""")


def stored_notes(root, session_id):
    with SessionStore(root) as store:
        return [row["message"] for row in store.messages(session_id) if row["message"].get("note_id")]


@pytest.mark.integration
@pytest.mark.parametrize("where", ["after-save", "before-save"])
def test_a_crash_between_note_and_save_delivers_the_note_exactly_once(tmp_path, where):
    child = subprocess.run([sys.executable, "-c", CRASHING, str(tmp_path), where], capture_output=True, text=True,
                           timeout=60)
    assert child.returncode == 3, child.stderr
    session_id = child.stdout.split()[0]
    before = stored_notes(tmp_path, session_id)
    assert len(before) == (1 if where == "after-save" else 0)
    model = ScriptedModel(["now", "later"])
    with Agent(workspace=tmp_path, model=model, session=session_id, context_poll=False) as agent:
        events = agent.run("after the crash").events
        again = agent.run("once more").events
    delivered = [e for e in events if isinstance(e, ev.ContextNote)]
    assert len(delivered) == (0 if where == "after-save" else 1)
    assert not [e for e in again if isinstance(e, ev.ContextNote)]
    after = stored_notes(tmp_path, session_id)
    assert len(after) == 1 and after[0]["note_id"].startswith("ctx-build-1-")
    assert sum("ctx-build-1-" in (m.get("content") or "") for m in model.requests[1].messages) == 1


KERNEL_LIKE = textwrap.dedent("""
    import sys, time
    from nbagent import Agent
    from nbagent.testing.scripted import ScriptedModel

    agent = Agent(workspace=sys.argv[1], model=ScriptedModel([]), context_tick=0.05, context_min_every=0.05)
    print("ready", flush=True)
    sys.stdin.readline()   # run until the test says stop
    agent.close()
""")


@pytest.mark.integration
def test_two_processes_on_one_workspace_run_one_poller(tmp_path):
    # Attached before either process starts: both would run it if both polled.
    with Agent(workspace=tmp_path, model=ScriptedModel([]), context_poll=False) as setup:
        setup.context.attach("who", command="echo $NBAGENT_CONTEXT_POLLER >> runs.log; date +%s%N",
                             every=0.05, workspace=True)
    (tmp_path / "runs.log").unlink()
    procs = [subprocess.Popen([sys.executable, "-c", KERNEL_LIKE, str(tmp_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready"
        log = tmp_path / "runs.log"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_lines(log)) < 6:
            time.sleep(0.05)
        runners = set(_lines(log))
        assert len(_lines(log)) >= 6 and len(runners) == 1
        # The holder goes away: the other process takes over at its next tick.
        holder = next(p for p in procs if str(p.pid) in runners)
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(30)
        other = next(p for p in procs if p is not holder)
        seen = len(_lines(log))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and str(other.pid) not in _lines(log)[seen:]:
            time.sleep(0.05)
        assert str(other.pid) in _lines(log)[seen:]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.stdin.write("\n")
                proc.stdin.flush()
                proc.wait(30)


def _lines(path) -> list[str]:
    try:
        return path.read_text().split()
    except FileNotFoundError:
        return []
