"""New workspace databases are copies of one migrated template: the same schema, made whole or not at all."""

from __future__ import annotations

import os
import sqlite3
import threading

from nbagent.store import db as dbmod
from nbagent.store.db import SCHEMA_VERSION, Database, workspace_db_path


def schema(path) -> list[tuple]:
    conn = sqlite3.connect(str(path))
    try:
        return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())
    finally:
        conn.close()


def migrated_from_empty(path) -> None:
    path.touch()
    Database(path).close()


def test_a_new_workspace_database_has_the_schema_the_migrations_make(tmp_path):
    (tmp_path / "ws").mkdir()
    made = workspace_db_path(tmp_path / "ws")
    assert made.stat().st_size > 0  # created whole, before any connection
    reference = tmp_path / "reference.db"
    migrated_from_empty(reference)
    db = Database(made)
    try:
        versions = db.conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        assert [v for v, _ in versions] == list(range(1, SCHEMA_VERSION + 1))
        assert [n for _, n in versions] == [m.__name__ for m in dbmod.MIGRATIONS]
        assert db.journal == "WAL"
        db.conn.execute("INSERT INTO memory (kind, text, norm, created) VALUES ('fact', 'xylophone', 'x', 0)")
        assert db.conn.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH 'xylophone'").fetchall()
    finally:
        db.close()
    assert schema(made) == schema(reference)
    assert oct(made.stat().st_mode & 0o777) == "0o600"


def test_without_hard_links_the_database_is_made_by_migrating(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    (tmp_path / "ws").mkdir()
    path = workspace_db_path(tmp_path / "ws")
    assert path.stat().st_size == 0  # the empty file create_private makes, then migrated on open
    Database(path).close()
    reference = tmp_path / "reference.db"
    migrated_from_empty(reference)
    assert schema(path) == schema(reference)
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".new")] == []  # no temporary left


def test_many_threads_opening_one_new_workspace_all_get_the_same_database(tmp_path):
    (tmp_path / "ws").mkdir()
    opened, errors = [], []

    def open_one():
        try:
            db = Database(workspace_db_path(tmp_path / "ws"))
            with db.write() as conn:
                conn.execute("INSERT INTO history (origin, prompt, created) VALUES ('t', 'p', 0)")
            opened.append(db.path)
            db.close()
        except Exception as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(set(opened)) == 1
    conn = sqlite3.connect(str(opened[0]))
    assert conn.execute("SELECT COUNT(*) FROM history").fetchone()[0] == 8
    conn.close()


def test_a_link_in_the_database_place_is_refused_not_replaced(tmp_path):
    import pytest

    from nbagent.workspace.state_dir import StateDirRefused

    (tmp_path / "ws" / ".nbagent").mkdir(parents=True)
    target = tmp_path / "elsewhere.db"
    (tmp_path / "ws" / ".nbagent" / "nbagent.db").symlink_to(target)
    with pytest.raises(StateDirRefused):
        workspace_db_path(tmp_path / "ws")
    assert not target.exists()
