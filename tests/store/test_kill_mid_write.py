"""A writer SIGKILLed at 30 random moments loses no acknowledged step and leaves a sound database."""

from __future__ import annotations

import random
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from tests.killable import KillableChild
from nbagent.store.sessions import SessionStore

from .writer import message_at

pytestmark = pytest.mark.process

WRITER = Path(__file__).with_name("writer.py")
ROUNDS = 30


def start_writer(workspace: Path) -> KillableChild:
    return KillableChild([sys.executable, str(WRITER), "kill", str(workspace)])


def kill_and_collect(child: KillableChild) -> tuple[str | None, int]:
    """SIGKILL the writer; the session it opened and the last message index it acknowledged."""
    child.kill()
    acked = max((int(words[1]) for words in child.lines if words[0] == "ack"), default=0)
    return child.first("ready"), acked


def _check(workspace: Path, session_id: str, acked: int) -> int:
    db = workspace / ".nbagent" / "nbagent.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = SessionStore(workspace)
    try:
        session = store.load(session_id)
    finally:
        store.close()
    stored = len(session.messages)
    assert stored >= acked, f"{acked} messages acknowledged, {stored} stored"
    assert stored % 2 == 0, "a step was stored half"
    for i in range(0, stored, 2):  # each step's assistant message exactly as written
        assert session.messages[i] == message_at(i)
        assert session.messages[i + 1]["tool_call_id"] == f"call_{i}"
    return stored


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_sigkill_at_random_moments_loses_no_acknowledged_step(workspace):
    rng = random.Random()
    session_id, total_acked, kills_while_writing = None, 0, 0
    for round_ in range(ROUNDS):
        child = start_writer(workspace)
        if round_ % 5 == 0:  # anywhere: during start-up, migrations, opening, or writing
            time.sleep(rng.uniform(0.0, 1.0))
        else:
            assert child.ready.wait(30), child.proc.stderr.read() if child.proc.poll() is not None else "no ready"
            time.sleep(rng.uniform(0.0, 0.15))
        sid, acked = kill_and_collect(child)
        session_id = session_id or sid
        if sid is not None:
            assert sid == session_id, "continue picked another session"
        if session_id is None:
            continue  # killed before the session existed: nothing was promised
        kills_while_writing += acked > total_acked
        total_acked = max(total_acked, acked)
        _check(workspace, session_id, total_acked)
    assert kills_while_writing >= ROUNDS // 2, "the kills should mostly land while steps are written"
    assert total_acked > 100
