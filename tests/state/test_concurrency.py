"""Four processes write to one workspace database at once: no error, no lost row."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nbagent.store.sessions import SessionStore

WRITER = Path(__file__).with_name("writer.py")
WRITERS, STEPS = 4, 400


@pytest.mark.integration
def test_four_processes_append_at_once_without_errors_or_lost_rows(workspace):
    procs = [subprocess.Popen([sys.executable, str(WRITER), "burst", str(workspace), f"w{n}", str(STEPS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(WRITERS)]
    for proc in procs:  # all have opened the store (racing to create and migrate it) ...
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    (workspace / "go").touch()  # ... and now write together
    results = [p.communicate(timeout=120) for p in procs]

    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err
        assert err == ""
    done = [line.split() for out, _ in results for line in out.splitlines()]
    db = workspace / ".nbagent" / "nbagent.db"
    assert len(done) == WRITERS
    store = SessionStore(workspace)
    for _, session_id, count in done:
        assert int(count) == 2 * STEPS
        session = store.load(session_id)
        assert len(session.messages) == 2 * STEPS
        assert len(store.tool_calls(session_id)) == STEPS and len(store.usage(session_id)) == STEPS
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0] == WRITERS * ((STEPS + 19) // 20)
        assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == 1
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        spans = conn.execute("SELECT MIN(created), MAX(created) FROM messages GROUP BY session_id").fetchall()
    assert max(start for start, _ in spans) < min(end for _, end in spans), "the writers did not overlap"
