"""The session store on a real SQLite file: choose, resume exactly, list, fork, purge, export, refuse."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from nbagent.errors import StoreError
from nbagent.store.db import MIGRATIONS, SCHEMA_VERSION, NewerSchema
from nbagent.store.sessions import SessionStore

from .writer import message_at


def _turn(session, prompt: str, steps: int = 1) -> None:
    session.begin_turn(prompt)
    session.append([{"role": "user", "content": prompt}])
    for _ in range(steps):
        i = 2 * len(session.messages)  # any even number: message_at gives a call and its result
        session.append([message_at(i), message_at(i + 1)])
    session.append([{"role": "assistant", "content": f"done: {prompt}", "reasoning": "thought"}])


def test_database_lives_in_the_workspace_with_its_gitignore(store, workspace):
    assert store.path == workspace / ".nbagent" / "nbagent.db"
    assert (workspace / ".nbagent" / ".gitignore").read_text() == "*\n"
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version, name FROM schema_migrations").fetchall() == [
                (n, m.__name__) for n, m in enumerate(MIGRATIONS, start=1)]


def test_resumed_session_has_exactly_the_history_todos_and_counters(store):
    session = store.open("new", origin="analysis.ipynb", provider="openai", model="gpt-4o")
    _turn(session, "why does the test fail?", steps=2)
    session.add_usage(1200, 80, 0.004)
    session.add_tool_call({"call_id": "call_2", "name": "read_file", "arguments": {"path": "a.py"},
                           "status": "done", "duration_ms": 12.5})
    session.set_todos([{"content": "fix it", "status": "in_progress"}])

    loaded = SessionStore(store.root).load(session.id)
    assert loaded.messages == session.messages
    assert loaded.messages[1]["reasoning_items"][0]["encrypted_content"].startswith("gAAA")
    assert loaded.messages[1]["tool_calls"][0]["id"] == "call_2"
    assert loaded.messages[2]["tool_call_id"] == "call_2"
    assert loaded.todos == [{"content": "fix it", "status": "in_progress"}]
    assert (loaded.turns, loaded.input_tokens, loaded.output_tokens, loaded.cost) == (1, 1200, 80, 0.004)
    assert (loaded.title, loaded.origin, loaded.provider, loaded.model) == (
        "why does the test fail?", "analysis.ipynb", "openai", "gpt-4o")
    # The resumed session keeps appending where it stopped.
    _turn(loaded, "and now?")
    resumed = store.load(session.id).messages
    assert resumed[:6] == session.messages and len(resumed) == 10
    assert (resumed[6]["content"], resumed[-1]["content"]) == ("and now?", "done: and now?")


def test_replayed_append_is_idempotent(store):
    session = store.create()
    step = [message_at(0), message_at(1)]
    session.append(step)
    store.backend.append_messages(session.id, 0, step, 0)
    assert store.load(session.id).messages == step


def test_appending_to_a_session_deleted_elsewhere_is_a_clear_error(store):
    session = store.create()
    SessionStore(store.root).delete(session.id)
    with pytest.raises(StoreError, match="no longer in"):
        session.append([{"role": "user", "content": "hello?"}])


def test_continue_picks_the_newest_session_of_the_origin(store, workspace):
    a = store.open("new", origin="a.ipynb")
    b = store.open("new", origin="b.ipynb")
    _turn(a, "later work on a")
    assert store.open("continue", origin=workspace / "a.ipynb").id == a.id  # absolute path, same notebook
    assert store.open("continue", origin="b.ipynb").id == b.id
    fresh = store.open("continue", origin="c.ipynb")
    assert fresh.id not in (a.id, b.id) and fresh.messages == []


def test_open_by_unique_prefix_and_clear_errors(store):
    session = store.create()
    assert store.open(session.id[:14]).id == session.id
    with pytest.raises(StoreError, match="no session matches"):
        store.open("zzzz")
    other = store.create()
    common = next(i for i in range(26) if session.id[i] != other.id[i])
    with pytest.raises(StoreError, match="matches several sessions"):
        store.resolve(session.id[:common])


def test_list_is_newest_first_with_turns_tokens_and_cost(store):
    first, second = store.create(model="m1"), store.create(model="m2")
    _turn(second, "second")
    _turn(first, "first")
    first.add_usage(100, 10, None)
    listing = store.list()
    assert [i.id for i in listing] == [first.id, second.id]
    top = listing[0]
    assert (top.title, top.model, top.turns, top.tokens, top.cost) == ("first", "m1", 1, 110, None)
    assert listing.problems == []


def test_corrupt_row_is_reported_and_skipped(store):
    good, bad = store.create(), store.create()
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE sessions SET turns = 'many' WHERE id = ?", (bad.id,))
    listing = store.list()
    assert [i.id for i in listing] == [good.id]
    assert len(listing.problems) == 1 and bad.id in listing.problems[0] and "turns" in listing.problems[0]

    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE sessions SET todos = '{oops' WHERE id = ?", (good.id,))
    assert "todos" in store.list().problems[1]
    with pytest.raises(StoreError, match="todos"):
        store.load(good.id)


def test_corrupt_file_is_reported_and_the_list_still_works(workspace):
    db = workspace / ".nbagent" / "nbagent.db"
    db.parent.mkdir()
    garbage = b"this is not a database at all" * 100
    db.write_bytes(garbage)
    store = SessionStore(workspace)
    listing = store.list()
    assert list(listing) == [] and "cannot be read as a database" in listing.problems[0]
    with pytest.raises(StoreError, match="move it aside"):
        store.create()
    assert db.read_bytes() == garbage  # reported, never touched


def test_newer_schema_is_refused_and_left_untouched(workspace):
    SessionStore(workspace).close()
    db = workspace / ".nbagent" / "nbagent.db"
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'm999_future', 0)", (SCHEMA_VERSION + 1,))
    conn.close()
    before = db.read_bytes()
    with pytest.raises(NewerSchema, match="newer than this nbagent"):
        SessionStore(workspace)
    assert db.read_bytes() == before


def test_fork_copies_history_up_to_a_turn(store):
    session = store.create(model="m")
    _turn(session, "one")
    _turn(session, "two")
    session.set_todos([{"content": "x", "status": "pending"}])
    whole = store.fork(session.id)
    assert whole.messages == session.messages and whole.todos == session.todos and whole.turns == 2
    part = store.fork(session.id, up_to_turn=1)
    assert part.messages == session.messages[:4] and part.turns == 1 and part.todos == []
    assert store.info(part.id).parent_id == session.id and store.info(part.id).forked_at_turn == 1
    _turn(part, "three")  # the fork goes on by itself
    assert len(store.load(session.id).messages) == 8
    with pytest.raises(StoreError, match="cannot fork at turn 5"):
        store.fork(session.id, 5)


def test_delete_and_purge_by_age(store):
    old, recent = store.create(), store.create()
    _turn(old, "old")
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE sessions SET updated = ? WHERE id = ?", (time.time() - 40 * 86_400, old.id))
    assert store.purge(0) == [] and len(store.list()) == 2
    assert len(store.purge()) == 1
    assert [i.id for i in store.list()] == [recent.id]
    with sqlite3.connect(store.path) as conn:  # its messages went with it
        assert conn.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (old.id,)).fetchone()[0] == 0
    assert store.delete(recent.id[:20]) == recent.id and store.list() == []


def test_export_then_import_round_trips(store, tmp_path):
    session = store.create(provider="openai", model="gpt-4o")
    _turn(session, "export me", steps=2)
    session.add_usage(10, 5, 0.01)
    session.add_tool_call({"call_id": "call_2", "name": "read_file", "arguments": "{}", "status": "done",
                           "duration_ms": 3.0, "output_chars": 120})
    text = store.export_json(session.id)

    (tmp_path / "elsewhere").mkdir()
    other = SessionStore(tmp_path / "elsewhere")
    new_id = other.import_json(text)
    assert new_id == session.id
    assert other.load(new_id).messages == session.messages
    assert other.tool_calls(new_id)[0]["output_chars"] == 120
    assert other.usage(new_id)[0]["cost"] == 0.01
    assert json.loads(other.export_json(new_id))["messages"] == json.loads(text)["messages"]
    # Importing again into the same store keeps both: the copy gets a new id.
    assert store.import_json(text) != session.id and len(store.list()) == 2


def test_import_of_a_bad_file_changes_nothing(store):
    with pytest.raises(StoreError, match="JSON cannot be read"):
        store.import_json("{not json")
    with pytest.raises(StoreError, match="session"):
        store.import_json(json.dumps({"format": "nbagent.session", "version": 1, "messages": []}))
    assert store.list() == []


def test_a_missing_or_corrupt_message_is_named_on_resume(store):
    session = store.create()
    session.begin_turn("one")
    session.append([message_at(0), message_at(1)])
    session.begin_turn("two")
    session.append([message_at(2), message_at(3)])
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE messages SET data = '{broken' WHERE session_id = ? AND idx = 2", (session.id,))
    with pytest.raises(StoreError, match="message 2 is corrupt"):
        store.load(session.id)
    with sqlite3.connect(store.path) as conn:
        conn.execute("DELETE FROM messages WHERE session_id = ? AND idx = 2", (session.id,))
    with pytest.raises(StoreError, match="message 2 is missing"):
        store.load(session.id)
    assert store.fork(session.id, 1).messages == [message_at(0), message_at(1)]  # the way on


def test_a_step_with_its_usage_and_tool_calls_is_one_transaction(store):
    """During a turn, the usage and tool-call records wait for the step's append and share its commit;
    outside one, a usage is written at once, record and totals together. Never an empty transaction:
    it takes the database's write lock all the same (one per step was a tenth of the loop's SQLite work)."""
    session = store.create(model="m")
    began: list[str] = []
    session.backend.db.conn.set_trace_callback(lambda sql: began.append(sql) if sql.startswith("BEGIN") else None)
    session.begin_turn("go")
    session.defer_records = True
    session.append([{"role": "user", "content": "go"}])
    for i in range(3):
        session.add_usage(100 + i, 5, 0.001)
        session.add_tool_call({"call_id": f"call_{i}", "name": "noop", "arguments": {}, "status": "done",
                               "duration_ms": 1.0})
        session.append([message_at(2 * i), message_at(2 * i + 1)])
    session.defer_records = False
    session.add_usage(7, 1, None)
    assert len(began) == 1 + 1 + 3 + 1  # begin_turn, the prompt, three steps, the usage after the turn
    loaded = store.load(session.id)
    assert (loaded.input_tokens, loaded.output_tokens) == (100 + 101 + 102 + 7, 16)
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM usage").fetchone()[0] == 4
        assert conn.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 3


def test_a_prompt_written_soon_waits_for_a_failed_write_and_goes_in_with_the_next(store):
    """Session.append_soon: the prompt is in the log at once and in the database with the next write. A
    write that fails (here a real SQLite trigger refusing it) loses nothing: the next one carries it."""
    session = store.create(model="m")
    session.defer_records = True
    session.begin_turn("go")
    session.append_soon([{"role": "user", "content": "go"}])
    assert session.messages[-1]["content"] == "go" and store.load(session.id).messages == []
    conn = session.backend.db.conn
    conn.execute("CREATE TEMP TRIGGER refuse BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    with pytest.raises(StoreError):
        session.flush()
    conn.execute("DROP TRIGGER refuse")
    session.append([message_at(0), message_at(1)])
    loaded = store.load(session.id)
    assert [m["content"] for m in loaded.messages[:1]] == ["go"] and len(loaded.messages) == 3
    assert loaded.turns == 1 and loaded.title == "go"
