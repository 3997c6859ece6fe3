"""Reading a session's messages back, fast: SQLite joins them into one JSON array, parsed in one call.

A resume is mostly this read. Building the array inside SQLite saves a Python
tuple, string and parse call per message (about a third of the time at 5,000
messages, bench/sessions.py). The row order of an aggregate is not promised by
SQLite, so the same pass also joins the indexes, and anything but 0, 1, 2, ...
falls back to a plain ordered read, which also names a missing or corrupt row.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..errors import StoreError
from . import codec

_JOINED = (
    "SELECT count(*), group_concat(idx), '[' || group_concat(data, ',') || ']' "
    "FROM (SELECT idx, data FROM messages WHERE session_id = ? ORDER BY idx)"
)


def read_messages(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    count, order, joined = conn.execute(_JOINED, (session_id,)).fetchone()
    if count == 0:
        return []
    if order == ",".join(map(str, range(count))):
        try:
            return codec.loads(joined)
        except ValueError:
            pass  # a corrupt row: the plain read below says which
    return _read_one_by_one(conn, session_id)


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
