"""A session's messages in and out of SQLite, fast: what only a transcript needs stays in the database.

A resume used to be mostly decoding tool outputs and tool calls (nine tenths of a coding session's
bytes), which the model's request never needs once pruning has dropped them: pruning keeps an old
assistant message's text only and drops old tool results (compaction.prune_at). So such a message
is written twice over: whole in ``data``, and as its ``head`` (a tool result without its content, an
assistant message with its text only) with ``omitted_chars``, the message_chars of what the head
leaves out, so pruning's sizes stay exact. A resume decodes heads in their place; ``read_whole``
reads the whole messages back when something needs them (nbagent.message_log decides when).

SQLite joins the rows into one JSON array, parsed in one call: that saves a Python tuple, string and
parse per message. The row order of an aggregate is not promised by SQLite, so the same pass joins
the indexes, and anything but 0, 1, 2, ... falls back to a plain ordered read, which also names a
missing or corrupt row.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..errors import StoreError
from ..message_log import message_chars
from . import codec

HEAD_MIN_BYTES = 256
"""A head is stored when it is at least this much shorter than the message: below that, fetching the
whole message apart costs more than decoding it."""

# No ORDER BY subquery: SQLite would copy every row through a co-routine (3x slower). The primary key
# search yields idx order; read_messages checks that order and reads row by row when it differs.
# One pass gives the order, the JSON array, and the heads' indexes and sizes as two JSON arrays
# (decoded in C; a head without its size says -1, and that session is read row by row, whole).
_JOINED = (
    "SELECT count(*), group_concat(idx), '[' || group_concat(coalesce(head, data), ',') || ']', "
    "'[' || group_concat(CASE WHEN head IS NOT NULL THEN idx END) || ']', "
    "'[' || group_concat(CASE WHEN head IS NOT NULL THEN coalesce(omitted_chars, -1) END) || ']' "
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
        return {k: v for k, v in message.items() if k != "content"}
    if role == "assistant":
        return {"role": "assistant", "content": message["content"]} if message.get("content") else {"role": role}
    return None


def read_messages(conn: sqlite3.Connection, session_id: str) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The messages, heads where stored; and {index: omitted_chars} of those heads."""
    count, order, joined, head_indexes, head_sizes = conn.execute(_JOINED, (session_id,)).fetchone()
    if count == 0:
        return [], {}
    if order == ",".join(map(str, range(count))):
        try:
            heads = dict(zip(codec.loads(head_indexes), codec.loads(head_sizes))) if head_indexes else {}
            if -1 not in heads.values():
                return codec.loads(joined), heads
        except ValueError:
            pass  # a corrupt row: the plain read below says which
    return _read_one_by_one(conn, session_id), {}


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
