"""``SqliteBackend``: the SessionBackend that makes each step durable in the workspace database."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from ..errors import StoreError
from . import codec
from .db import Database
from .messages import message_row

# Columns a Session may change through update_session; anything else is a programming error.
UPDATABLE = frozenset({
    "title", "origin", "provider", "model", "turns", "input_tokens", "output_tokens", "cached_tokens", "image_tokens", "cost",
    "todos", "summary_index", "updated",
})


dump = codec.dumps


class SqliteBackend:
    """Every call is one committed transaction: when it returns, a process kill cannot undo it."""

    def __init__(self, db: Database):
        self.db = db

    def batch(self):
        """One transaction around several calls (Session.append uses it for a whole step)."""
        return self.db.write()

    def append_messages(self, session_id: str, start_index: int, messages: list[dict], turn: int) -> None:
        now = time.time()
        rows = [(session_id, start_index + i, turn, *message_row(m), now) for i, m in enumerate(messages)]
        try:
            with self.db.write() as conn:
                # (session_id, idx) is unique, so replaying an append after a retry adds nothing twice.
                conn.executemany(
                    "INSERT INTO messages (session_id, idx, turn, role, data, head, omitted_chars, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (session_id, idx) DO NOTHING",
                    rows,
                )
                conn.execute("UPDATE sessions SET updated = ? WHERE id = ?", (now, session_id))
        except sqlite3.IntegrityError as exc:  # the row is gone: deleted from another terminal or kernel
            raise StoreError(f"session {session_id} is no longer in {self.db.path} (deleted elsewhere?); "
                             "start a new session to go on") from exc

    def update_session(self, session_id: str, **fields: Any) -> None:
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise ValueError(f"update_session: unknown session field(s) {sorted(unknown)}")
        fields.setdefault("updated", time.time())
        if "todos" in fields:
            fields["todos"] = dump(fields["todos"])
        assignments = ", ".join(f"{name} = ?" for name in fields)
        with self.db.write() as conn:
            conn.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", (*fields.values(), session_id))

    def add_tool_call(self, session_id: str, record: dict[str, Any]) -> None:
        arguments = record.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = dump(arguments)
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO tool_calls (session_id, turn, call_id, name, arguments, status, duration_ms, data, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id, int(record.get("turn", 0)), record.get("call_id"), str(record.get("name", "")),
                    arguments, record.get("status"), record.get("duration_ms"), dump(record), time.time(),
                ),
            )

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO usage (session_id, turn, input_tokens, output_tokens, cached_tokens, image_tokens, cost, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id, int(record.get("turn", 0)), int(record.get("input_tokens", 0)),
                    int(record.get("output_tokens", 0)), int(record.get("cached_tokens", 0)),
                    int(record.get("image_tokens", 0)), record.get("cost"), time.time(),
                ),
            )
