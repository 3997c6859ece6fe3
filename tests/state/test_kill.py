"""A writer SIGKILLed at 30 random moments loses no acknowledged step and leaves a sound database."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nbagent.store.sessions import SessionStore

from .writer import message_at

pytestmark = pytest.mark.process

WRITER = Path(__file__).with_name("writer.py")
ROUNDS = 30


class Child:
    """The writer process and the lines it printed, read on a thread so the pipe never fills."""

    def __init__(self, workspace: Path):
        self.proc = subprocess.Popen([sys.executable, str(WRITER), "kill", str(workspace)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.split())
            if line.startswith("ready"):
                self.ready.set()

    def kill_and_collect(self) -> tuple[str | None, int]:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.reader.join(5)
        session_id = next((parts[1] for parts in self.lines if parts[0] == "ready"), None)
        acked = max((int(parts[1]) for parts in self.lines if parts[0] == "ack"), default=0)
        return session_id, acked


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
        child = Child(workspace)
        if round_ % 5 == 0:  # anywhere: during start-up, migrations, opening, or writing
            time.sleep(rng.uniform(0.0, 1.0))
        else:
            assert child.ready.wait(30), child.proc.stderr.read() if child.proc.poll() is not None else "no ready"
            time.sleep(rng.uniform(0.0, 0.15))
        sid, acked = child.kill_and_collect()
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
