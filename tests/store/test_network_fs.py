"""State on a network filesystem: a rollback journal instead of WAL, one clear message, or a local state dir."""

from __future__ import annotations

import logging

from nbagent.store import fs
from nbagent.store.db import Database, workspace_db_path
from nbagent.store.sessions import SessionStore


def _journal(db: Database) -> str:
    with db.read() as conn:
        return conn.execute("PRAGMA journal_mode").fetchone()[0].upper()


def test_local_disk_keeps_wal(tmp_path):
    db = Database(workspace_db_path(tmp_path))
    try:
        assert _journal(db) == "WAL"
    finally:
        db.close()


def test_a_network_filesystem_gets_a_rollback_journal_and_one_message(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(fs, "filesystem_type", lambda path: "nfs4")  # forced detection; the file is real
    caplog.set_level(logging.WARNING, logger="nbagent")
    for _ in range(2):
        with SessionStore(tmp_path) as store:
            session = store.create(origin="nb.ipynb")
            session.begin_turn("hello")
            session.append([{"role": "user", "content": "hello"}])
            assert _journal(store.db) == "DELETE"
    messages = [r.getMessage() for r in caplog.records if "network filesystem" in r.getMessage()]
    assert len(messages) == 1 and "nfs4" in messages[0] and "NBAGENT_STATE_DIR" in messages[0]
    assert not (tmp_path / ".nbagent" / "nbagent.db-wal").exists()
    with SessionStore(tmp_path) as store:
        assert len(store.list()) == 2


def test_the_mount_table_names_the_filesystem(tmp_path):
    assert fs.filesystem_type(tmp_path) != ""  # the real mount table knows where tmp_path lives


def test_a_configured_state_dir_holds_the_database(tmp_path, monkeypatch):
    local = tmp_path / "local-state"
    work = tmp_path / "home" / "project"
    work.mkdir(parents=True)
    monkeypatch.setenv(fs.STATE_DIR_ENV, str(local))
    path = workspace_db_path(work)
    assert path.parent.parent == local and path.parent.name.startswith("project-")
    with SessionStore(work) as store:
        store.create()
    assert path.exists() and not (work / ".nbagent" / "nbagent.db").exists()
