"""A resume leaves what only a transcript needs in the database (issue 15): real SQLite files throughout.

The request after a resume, the transcript, fork, export and import see exactly what they saw when
every message was read whole; a corrupt or missing row gives a clear error and changes nothing.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import random
import shutil
import sqlite3

import pytest

from nbagent.render.agent_state import ToolItem
from nbagent.engine.compaction import cut_index, message_chars, prune, prune_at
from nbagent.errors import StoreError
from nbagent.store.sessions import SessionStore

BUDGET = 20_000  # tokens: the built session is about three times that, so pruning cuts it


def build(store: SessionStore, steps: int = 120, seed: int = 3) -> tuple[str, list[dict]]:
    """A coding session: turns of tool calls (with reasoning items) and long outputs, as the loop
    writes them. Returns its id and every message, as appended."""
    rng = random.Random(seed)
    session = store.create(provider="openai", model="scripted-model")
    for i in range(steps):
        if i % 10 == 0:
            session.begin_turn(f"prompt {i}")
            session.append([{"role": "user", "content": f"prompt {i}: read the next modules"}])
        call_id = f"call_{i:04d}"
        lines = rng.randint(1, 80)  # some outputs too short to leave in the store
        session.append([
            {"role": "assistant", "content": f"Reading part {i}." if i % 3 else "",
             "reasoning_items": [{"id": f"rs_{i}", "summary": [], "encrypted_content": "gAAAA" + "q" * 300}],
             "tool_calls": [{"id": call_id, "name": "read_file",
                             "arguments": json.dumps({"path": f"src/m{i}.py"}), "reasoning_id": f"rs_{i}"}]},
            {"role": "tool", "tool_call_id": call_id, "name": "read_file", "is_error": i % 7 == 0,
             "content": "\n".join(f"{n:4d}  ünïcode line {i}.{n} <b>&amp;</b>" for n in range(lines))},
        ])
    session.append([{"role": "assistant", "content": "Done reading."}])
    return session.id, [json.loads(json.dumps(m)) for m in session.messages]


def test_resume_reads_heads_and_the_request_matches_reading_everything(workspace, store):
    sid, expected = build(store)
    with SessionStore(workspace) as fresh:  # another connection, as a new process would have
        session = fresh.load(sid)
        heads = session.log.unread
        assert heads > len(expected) // 3
        assert session.wire_sizes() == [message_chars(m) for m in expected]
        cut = cut_index(session.wire_sizes(), BUDGET)
        assert 0 < cut < len(expected) - 12
        assert prune_at(session.wire_messages(loaded_from=cut), cut) == prune(expected, BUDGET)
        assert 0 < session.log.unread < heads  # only the kept part was read whole
        assert session.messages == expected and session.log.unread == 0


def test_fork_export_and_import_of_a_resumed_session_keep_everything(workspace, store):
    sid, expected = build(store)
    with SessionStore(workspace) as fresh:
        assert fresh.load(sid).log.unread > 0
        forked = fresh.fork(sid)
        assert forked.log.unread > 0 and forked.messages == expected
        exported = json.loads(fresh.export_json(sid))
        assert [m["message"] for m in exported["messages"]] == expected
        shown = fresh.show(sid)["messages"]
        assert shown == expected
    (workspace.parent / "elsewhere").mkdir()
    with SessionStore(workspace.parent / "elsewhere") as other:
        new_id = other.import_json(json.dumps(exported))
        imported = other.load(new_id)
        assert imported.log.unread > 0  # the import writes heads too
        assert imported.messages == expected


def test_a_session_outlives_its_closed_store(workspace, store):
    sid, expected = build(store, steps=30)
    fresh = SessionStore(workspace)
    session = fresh.load(sid)
    fresh.close()
    assert session.messages == expected


def _headed_tool_row(workspace, sid: str) -> int:
    with sqlite3.connect(workspace / ".nbagent" / "nbagent.db") as conn:
        return conn.execute("SELECT min(idx) FROM messages WHERE session_id = ? AND role = 'tool' "
                            "AND head IS NOT NULL", (sid,)).fetchone()[0]


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_a_damaged_row_gives_a_clear_error_and_changes_nothing(workspace, store, damage):
    sid, expected = build(store)
    idx = _headed_tool_row(workspace, sid)
    with SessionStore(workspace) as fresh:
        session = fresh.load(sid)
        with sqlite3.connect(workspace / ".nbagent" / "nbagent.db") as conn:
            if damage == "corrupt":
                conn.execute("UPDATE messages SET data = '{\"role\": \"tool\", \"content\": \"cut' "
                             "WHERE session_id = ? AND idx = ?", (sid, idx))
            else:
                conn.execute("DELETE FROM messages WHERE session_id = ? AND idx = ?", (sid, idx))
        # The request never needs that old output: pruning drops it, so the session goes on.
        cut = cut_index(session.wire_sizes(), BUDGET)
        assert idx < cut
        assert prune_at(session.wire_messages(loaded_from=cut), cut) == prune(expected, BUDGET)
        unread, before = session.log.unread, list(session.message_heads())
        reason = "is corrupt" if damage == "corrupt" else "is no longer in the store"
        for _ in range(2):  # and again: the first failure changed nothing
            with pytest.raises(StoreError, match=rf"session {sid}: message {idx} {reason}.*nothing was changed"):
                session.messages
            assert session.log.unread == unread and session.message_heads() == before
    with sqlite3.connect(workspace / ".nbagent" / "nbagent.db") as conn:
        rows = conn.execute("SELECT count(*) FROM messages WHERE session_id = ?", (sid,)).fetchone()[0]
    assert rows == len(expected) - (damage == "missing")


@pytest.mark.process
@pytest.mark.integration
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_request_and_transcript_after_a_resume_are_unchanged(workspace, store, api):
    """The scripted server gets the same bytes whether the store left outputs in the database (heads)
    or read every row whole (rows without heads: how every row was read before issue 15)."""
    from nbagent import Agent
    from nbagent.testing.replies import Reply
    from nbagent.testing.server import ScriptedServer

    sid, expected = build(store)
    store.close()
    db = workspace / ".nbagent" / "nbagent.db"
    backup = workspace.parent / "backup.db"
    shutil.copy(db, backup)

    def resume(server) -> tuple[bytes, tuple, int]:
        server.enqueue(Reply(text="Going on."))
        agent = Agent(workspace=workspace, base_url=server.url, api_key="sk-test", api=api, model="scripted-model",
                      session=sid, compact_threshold=BUDGET, memory=False)
        try:
            agent.run("go on", timeout=60)
            unread = agent.session.log.unread
            transcript = agent.snapshot().transcript
        finally:
            agent.close()
        return server.model_requests()[-1].raw, transcript, unread

    with ScriptedServer() as server:
        lazy_request, lazy_transcript, unread = resume(server)
        assert unread > 0  # the request was sent without reading the old outputs
        for suffix in ("-wal", "-shm"):
            db.with_name(db.name + suffix).unlink(missing_ok=True)
        shutil.copy(backup, db)
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE messages SET head = NULL, omitted_chars = NULL")
        whole_request, whole_transcript, unread = resume(server)
        assert unread == 0
    assert lazy_request == whole_request
    assert b"Reading part" in lazy_request and len(json.loads(lazy_request)) > 0
    # The stored turns, and the new turn but for its random id.
    assert lazy_transcript[:-1] == whole_transcript[:-1]
    assert dataclasses.replace(lazy_transcript[-1], turn_id="") == dataclasses.replace(whole_transcript[-1], turn_id="")
    outputs = [item.output for turn in lazy_transcript for item in turn.items if isinstance(item, ToolItem)]
    assert outputs == [m["content"] for m in expected if m["role"] == "tool"]


def test_a_resumed_agents_transcript_shows_what_it_can_read_and_names_a_damaged_row(workspace, store):
    from nbagent import Agent
    from nbagent.testing.scripted import ScriptedModel

    sid, expected = build(store, steps=40)
    idx = _headed_tool_row(workspace, sid)
    with sqlite3.connect(workspace / ".nbagent" / "nbagent.db") as conn:
        conn.execute("UPDATE messages SET data = 'not json' WHERE session_id = ? AND idx = ?", (sid, idx))
    agent = Agent(workspace=workspace, model=ScriptedModel([]), session=sid, memory=False)
    try:
        state = agent.snapshot()
    finally:
        agent.close()
    [notice] = state.notices
    assert notice.level == "error" and f"message {idx} is corrupt" in notice.text
    outputs = [item.output for turn in state.transcript for item in turn.items if isinstance(item, ToolItem)]
    # Every other output whole; the damaged one shows none (not an empty one).
    assert outputs == [None if i == idx else m["content"] for i, m in enumerate(expected) if m["role"] == "tool"]


def test_rows_out_of_order_or_with_a_damaged_head_are_read_whole(workspace, store):
    sid, expected = build(store, steps=30)
    db = workspace / ".nbagent" / "nbagent.db"
    idx = _headed_tool_row(workspace, sid)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE messages SET head = '{broken' WHERE session_id = ? AND idx = ?", (sid, idx))
    with SessionStore(workspace) as fresh:
        session = fresh.load(sid)  # the head cannot be parsed: every row is read whole from data
        assert session.log.unread == 0 and session.messages == expected
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE messages SET head = NULL, omitted_chars = NULL WHERE session_id = ? AND idx = ?",
                     (sid, idx))
    with SessionStore(workspace) as fresh:
        session = fresh.load(sid)  # that row is read whole, the others stay heads
        assert session.log.unread > 0 and session.messages == expected
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE messages SET omitted_chars = NULL WHERE session_id = ? AND idx = ?",
                     (sid, _headed_tool_row(workspace, sid)))
    with SessionStore(workspace) as fresh:
        session = fresh.load(sid)  # a head without its size: every row is read whole
        assert session.log.unread == 0 and session.messages == expected
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM messages WHERE session_id = ? AND idx = 1", (sid,))
    with SessionStore(workspace) as fresh, pytest.raises(StoreError, match=f"session {sid}: message 1 is missing"):
        fresh.load(sid)


def test_readers_on_two_threads_read_each_row_once_and_agree(workspace, store):
    sid, expected = build(store)
    with SessionStore(workspace) as fresh:
        session = fresh.load(sid)
        sizes = [message_chars(m) for m in expected]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            jobs = [pool.submit(lambda: session.messages) for _ in range(4)]
            jobs += [pool.submit(session.wire_sizes) for _ in range(4)]
            results = [job.result() for job in jobs]
        assert all(r == expected for r in results[:4]) and all(r == sizes for r in results[4:])


def _as_before_heads(path, sid) -> dict[int, tuple]:
    """Make the session's rows as nbagent wrote them before heads existed; returns the heads it had."""
    conn = sqlite3.connect(str(path))
    had = {idx: (head, omitted) for idx, head, omitted in
           conn.execute("SELECT idx, head, omitted_chars FROM messages WHERE session_id = ? AND head IS NOT NULL",
                        (sid,))}
    conn.execute("UPDATE messages SET head = NULL, omitted_chars = NULL WHERE session_id = ?", (sid,))
    conn.commit()
    conn.close()
    return had


def test_a_session_stored_before_heads_gets_them_at_its_first_resume(workspace, store):
    sid, expected = build(store)
    had = _as_before_heads(store.path, sid)
    assert len(had) > len(expected) // 3
    with SessionStore(workspace) as fresh:
        first = fresh.load(sid)
        assert first.log.unread == 0 and first.messages == expected  # read whole, as before
        fresh.backfill.join(30)
    conn = sqlite3.connect(str(store.path))
    now = {idx: (head, omitted) for idx, head, omitted in
           conn.execute("SELECT idx, head, omitted_chars FROM messages WHERE session_id = ? AND head IS NOT NULL",
                        (sid,))}
    conn.close()
    assert now == had  # the heads it would have had
    with SessionStore(workspace) as fresh:
        again = fresh.load(sid)
        assert again.log.unread == len(had) and fresh.backfill is None  # fast now; nothing left to do
        cut = cut_index(again.wire_sizes(), BUDGET)
        assert prune_at(again.wire_messages(loaded_from=cut), cut) == prune(expected, BUDGET)
        assert again.messages == expected


def test_a_row_rewritten_during_the_backfill_keeps_what_was_written(workspace, store):
    from nbagent.store.messages import backfill_heads

    sid, _ = build(store, steps=20)
    _as_before_heads(store.path, sid)
    victim = store.db.conn.execute("SELECT min(idx) FROM messages WHERE session_id = ? AND role = 'tool' "
                                   "AND length(data) > 1024", (sid,)).fetchone()[0]
    real_write = store.db.write

    class RewritesFirst:
        """The store's database, with another writer changing one row between the read and the update."""

        def read(self):
            return store.db.read()

        def write(self):
            with real_write() as conn:
                conn.execute("UPDATE messages SET data = json_set(data, '$.content', 'rewritten') "
                             "WHERE session_id = ? AND idx = ?", (sid, victim))
            return real_write()

    updated = backfill_heads(RewritesFirst(), sid)
    head, data = store.db.conn.execute("SELECT head, data FROM messages WHERE session_id = ? AND idx = ?",
                                       (sid, victim)).fetchone()
    assert head is None and json.loads(data)["content"] == "rewritten"  # not given the old row's head
    assert updated > 0


def test_a_long_result_that_can_have_no_head_starts_no_backfill(workspace, store):
    """A tool result whose content is not text gets no head, written now or before: loading it must
    not start a backfill that finds nothing, at every resume."""
    session = store.create()
    session.begin_turn("p")
    session.append([{"role": "user", "content": "p"},
                    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "see", "arguments": "{}"}]},
                    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "x" * 3000}]}])
    with SessionStore(workspace) as fresh:
        loaded = fresh.load(session.id)
        assert fresh.backfill is None and loaded.messages[-1]["content"][0]["text"] == "x" * 3000
