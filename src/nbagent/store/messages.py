"""A session's messages in and out of SQLite, fast: what only a transcript needs stays in the database.

A resume used to be mostly decoding tool outputs and tool calls (nine tenths of a coding session's
bytes), which the model's request never needs once pruning has dropped them: pruning keeps an old
assistant message's text only and drops old tool results (compaction.prune_at). So such a message
is written twice over: whole in ``data``, and as its ``head`` (a tool result without its content, an
assistant message with its text only) with ``omitted_chars``, the message_chars of what the head
leaves out, so pruning's sizes stay exact. A resume decodes heads in their place; ``read_whole``
reads the whole messages back when something needs them (nbagent.session.message_log decides when).

SQLite joins the rows into one JSON array, parsed in one call: that saves a Python tuple, string and
parse per message. The row order of an aggregate is not promised by SQLite, so the same pass joins
the indexes, and anything but 0, 1, 2, ... falls back to a plain ordered read, which also names a
missing or corrupt row.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..errors import StoreError
from ..session.message_log import message_chars
from . import codec

HEAD_MIN_BYTES = 256
"""A head is stored when it is at least this much shorter than the message: below that, fetching the
whole message apart costs more than decoding it."""

STALE_BYTES = 1024
"""A tool result this long without a head was written before heads existed (migration m004): a
head would be at least this much shorter, so rows written since always have one."""

# No ORDER BY subquery: SQLite would copy every row through a co-routine (3x slower). The primary key
# search yields idx order; read_messages checks that order and reads row by row when it differs.
# One pass gives the order, the JSON array, and the heads' indexes and sizes as two JSON arrays
# (decoded in C; a head without its size says -1, and that session is read row by row, whole).
_JOINED = (
    "SELECT count(*), group_concat(idx), '[' || group_concat(coalesce(head, data), ',') || ']', "
    "'[' || group_concat(CASE WHEN head IS NOT NULL THEN idx END) || ']', "
    "'[' || group_concat(CASE WHEN head IS NOT NULL THEN coalesce(omitted_chars, -1) END) || ']', "
    # CASE, not AND: its branches run in order, so a corrupt row never reaches json_type (which would
    # fail the whole read instead of letting the plain read below name the row).
    f"sum(CASE WHEN head IS NOT NULL OR role != 'tool' OR length(CAST(data AS BLOB)) <= {STALE_BYTES} THEN 0 "
    "WHEN NOT json_valid(data) THEN 0 WHEN json_type(data, '$.content') = 'text' THEN 1 ELSE 0 END) "
    "FROM messages WHERE session_id = ?"
)
_JOINED_RANGE = ("SELECT count(*), group_concat(idx), '[' || group_concat(data, ',') || ']' "
                 "FROM messages WHERE session_id = ? AND idx BETWEEN ? AND ?")


def message_row(message: dict[str, Any]) -> tuple[str, str, str | None, int | None]:
    """(role, data, head, omitted_chars) of a message as the messages table stores it."""
    role = str(message.get("role", ""))
    data = codec.dumps(message)
    head = _head(role, message)
    if head is None:
        return role, data, None, None
    head_data = codec.dumps(head)
    if len(data) - len(head_data) < HEAD_MIN_BYTES:
        return role, data, None, None
    return role, data, head_data, message_chars(message) - message_chars(head)


def _head(role: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """What the pruned request reads of an old message (compaction._strip keeps no more of it)."""
    if role == "tool" and isinstance(message.get("content"), str):
        return {k: v for k, v in message.items() if k not in ("content", "images")}
    if role == "assistant":
        return {"role": "assistant", "content": message["content"]} if message.get("content") else {"role": role}
    return None


def read_messages(conn: sqlite3.Connection, session_id: str) -> tuple[list[dict[str, Any]], dict[int, int], bool]:
    """The messages, heads where stored; {index: omitted_chars} of those heads; and whether the
    session has rows written before heads existed (``backfill_heads`` gives them theirs)."""
    count, order, joined, head_indexes, head_sizes, stale = conn.execute(_JOINED, (session_id,)).fetchone()
    if count == 0:
        return [], {}, False
    if order == ",".join(map(str, range(count))):
        try:
            heads = dict(zip(codec.loads(head_indexes), codec.loads(head_sizes))) if head_indexes else {}
            if -1 not in heads.values():
                return codec.loads(joined), heads, bool(stale)
        except ValueError:
            pass  # a corrupt row: the plain read below says which
    return _read_one_by_one(conn, session_id), {}, False


BACKFILL_CHUNK = 500


def backfill_heads(db: Any, session_id: str) -> int:
    """Store the heads of a session's rows written before heads existed; returns how many got one.

    Without them such a session is read whole at every resume (37.9 ms for a 5,000-message coding
    session against 9.5 ms with heads). A row is updated only if it is still the one read (same
    ``data``, still no head): something that rewrote it meanwhile keeps what it wrote. Chunks of
    rows, each its own short write, so an agent's own writes never wait long.
    """
    done, last = 0, -1
    while True:
        with db.read() as conn:
            rows = conn.execute("SELECT idx, role, data FROM messages WHERE session_id = ? AND idx > ? "
                                "AND head IS NULL ORDER BY idx LIMIT ?",
                                (session_id, last, BACKFILL_CHUNK)).fetchall()
        if not rows:
            return done
        updates = []
        for idx, role, data in rows:
            try:
                message = codec.loads(data)
            except ValueError:
                continue  # a corrupt row stays as it is: reading it says so
            if not isinstance(message, dict):
                continue
            _, _, head, omitted = message_row(message)
            if head is not None:
                updates.append((head, omitted, session_id, idx, data))
        if updates:
            with db.write() as conn:
                cursor = conn.executemany("UPDATE messages SET head = ?, omitted_chars = ? WHERE session_id = ? "
                                          "AND idx = ? AND head IS NULL AND data = ?", updates)
                done += max(cursor.rowcount, 0)
        last = rows[-1][0]


def read_whole(conn: sqlite3.Connection, session_id: str, indexes: list[int]) -> dict[int, dict[str, Any]]:
    """The whole messages at ``indexes`` (sorted); a missing or corrupt one raises StoreError naming it."""
    first, last = indexes[0], indexes[-1]
    count, order, joined = conn.execute(_JOINED_RANGE, (session_id, first, last)).fetchone()
    if count == last - first + 1 and order == ",".join(map(str, range(first, last + 1))):
        try:  # the usual case: one parse for the whole range, as read_messages does
            every = codec.loads(joined)
            return {index: every[index - first] for index in indexes}
        except ValueError:
            pass  # a corrupt row: the read below says which
    found = dict(conn.execute("SELECT idx, data FROM messages WHERE session_id = ? AND idx BETWEEN ? AND ?",
                              (session_id, first, last)).fetchall())
    whole = {}
    for index in indexes:
        if index not in found:
            raise StoreError(f"session {session_id}: message {index} is no longer in the store "
                             "(session deleted elsewhere?); nothing was changed")
        try:
            whole[index] = codec.loads(found[index])
        except ValueError as exc:
            raise StoreError(f"session {session_id}: message {index} is corrupt ({exc}); "
                             "nothing was changed: fork the session at an earlier turn to go on") from exc
    return whole


def _read_one_by_one(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT idx, data FROM messages WHERE session_id = ? ORDER BY idx", (session_id,)).fetchall()
    messages = []
    for expected, (idx, text) in enumerate(rows):
        if idx != expected:
            raise StoreError(f"session {session_id}: message {expected} is missing from the store; "
                             "fork the session at an earlier turn to go on")
        try:
            messages.append(codec.loads(text))
        except ValueError as exc:
            raise StoreError(f"session {session_id}: message {idx} is corrupt ({exc}); "
                             "fork the session at an earlier turn to go on") from exc
    return messages
