"""Moving a session between two workspace databases in SQL (a batch's copy into the user's workspace)."""

from __future__ import annotations

import sqlite3

import pytest

from nbagent.errors import StoreError
from nbagent.store.sessions import SessionStore

from .test_lazy_resume import build


def _without_workspace(export: dict) -> dict:
    session = {k: v for k, v in export["session"].items() if k not in ("workspace", "id")}
    return {**export, "session": session}


def test_a_moved_session_is_the_session_that_was_stored(tmp_path):
    (tmp_path / "copy").mkdir()
    (tmp_path / "user").mkdir()
    with SessionStore(tmp_path / "copy") as source:
        sid, _ = build(source, steps=30)
        backend = source._backend()
        backend.add_tool_call(sid, {"turn": 1, "call_id": "call_x", "name": "write_file", "arguments": "{}",
                                    "status": "done", "duration_ms": 3.5, "created": 1.0})
        backend.add_usage(sid, {"turn": 1, "input_tokens": 10, "output_tokens": 5, "cost": 0.25, "created": 1.0})
        original = source.export_dict(sid)
        path = source.path
    with SessionStore(tmp_path / "user") as target:
        moved = target.move_from(path, sid)
        again = target.move_from(path, sid)  # the id is taken now: the second gets a new one
        first, second = target.export_dict(moved), target.export_dict(again)
        loaded = target.load(moved)
    assert moved == sid and again != sid
    assert _without_workspace(first) == _without_workspace(original) == _without_workspace(second)
    assert first["session"]["workspace"] == str((tmp_path / "user").resolve())
    assert loaded.log.unread > 0  # heads came across as stored: a resume stays fast


def _altered_copy(tmp_path, statement: str):
    """A copy's database holding a short session, then changed by ``statement``; (path, session id)."""
    (tmp_path / "copy").mkdir()
    (tmp_path / "user").mkdir()
    with SessionStore(tmp_path / "copy") as source:
        sid, _ = build(source, steps=3)
        path = source.path
    conn = sqlite3.connect(str(path))
    conn.execute(statement)
    conn.commit()
    conn.close()
    return path, sid


def test_a_database_of_another_schema_is_refused_and_nothing_is_written(tmp_path):
    path, sid = _altered_copy(tmp_path, "INSERT INTO schema_migrations (version, name, applied) "
                                        "VALUES (99, 'future', 0)")
    with SessionStore(tmp_path / "user") as target:
        with pytest.raises(StoreError, match="schema 99"):
            target.move_from(path, sid)
        with pytest.raises(StoreError, match="no session"):
            target.move_from(target.path, "nope")
        assert target.list() == []
        with target.db.write() as conn:  # the connection is usable: nothing left attached or open
            conn.execute("INSERT INTO history (origin, prompt, created) VALUES ('.', 'p', 0)")


def test_a_database_with_a_trigger_of_its_own_is_refused(tmp_path):
    """A repository can commit a .nbagent/nbagent.db of its own, which a batch copy then holds: rows
    are moved as stored only out of a file with this nbagent's schema, nothing more."""
    path, sid = _altered_copy(tmp_path, "CREATE TRIGGER planted AFTER INSERT ON usage BEGIN DELETE FROM sessions; END")
    with SessionStore(tmp_path / "user") as target:
        with pytest.raises(StoreError, match="another schema"):
            target.move_from(path, sid)
        assert target.list() == []
