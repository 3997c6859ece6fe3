"""The review of turns' changes, in the workspace database: which rows were kept, undone or suggested.

A turn's change rows are computed from its checkpoint (nbagent.checkpoints.changes); only what the user
decided about them is stored here, so every process on the workspace (the server, a kernel's ``%agent``)
sees the same review. A row with no line here is pending.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Iterable

from .db import Database

STATUSES = ("kept", "undone", "suggested")


@dataclass(frozen=True)
class Decision:
    """What was decided about one row: its status, the review action that set it, its path; and for a
    suggested row (review before writing) the row and its notebook operations."""

    status: str
    action: int
    path: str
    data: dict[str, Any] | None = None


class ReviewLog:
    def __init__(self, db: Database):
        self.db = db

    def decisions(self, session_id: str, turn: int) -> dict[str, Decision]:
        """Row id -> what was decided about it, for one turn."""
        with self.db.read() as conn:
            rows = conn.execute("SELECT row_id, status, action, path, data FROM change_reviews "
                                "WHERE session_id = ? AND turn = ?", (session_id, turn)).fetchall()
        return {r[0]: Decision(r[1], r[2], r[3], json.loads(r[4]) if r[4] else None) for r in rows}

    def mark(self, session_id: str, turn: int, rows: Iterable[tuple[str, str]], status: str | None,
             action: int = 0) -> None:
        """Set ``status`` on rows given as (row id, path); None makes them pending again (a suggested row
        keeps its data: its line stays, as "undone" or "kept")."""
        now = time.time()
        with self.db.write() as conn:
            for row_id, path in rows:
                if status is None:
                    conn.execute("DELETE FROM change_reviews WHERE session_id = ? AND turn = ? AND row_id = ? "
                                 "AND data IS NULL", (session_id, turn, row_id))
                    continue
                conn.execute(
                    "INSERT INTO change_reviews (session_id, turn, row_id, status, action, path, updated) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, turn, row_id) DO UPDATE SET "
                    "status = excluded.status, action = excluded.action, updated = excluded.updated",
                    (session_id, turn, row_id, status, action, path, now))

    def suggest(self, session_id: str, turn: int, path: str, data: dict[str, Any]) -> str:
        """Record a suggested row (its ``data`` without an id yet); returns its id ("<turn>:s<n>")."""
        with self.db.write() as conn:
            count = conn.execute("SELECT COUNT(*) FROM change_reviews WHERE session_id = ? AND turn = ? "
                                 "AND data IS NOT NULL", (session_id, turn)).fetchone()[0]
            row_id = f"{turn}:s{count + 1}"
            conn.execute(
                "INSERT INTO change_reviews (session_id, turn, row_id, status, action, path, data, updated) "
                "VALUES (?, ?, ?, 'suggested', 0, ?, ?, ?)",
                (session_id, turn, row_id, path, json.dumps({**data, "id": row_id}), time.time()))
        return row_id

    def next_action(self, session_id: str) -> int:
        with self.db.read() as conn:
            return conn.execute("SELECT COALESCE(MAX(action), 0) + 1 FROM change_reviews WHERE session_id = ?",
                                (session_id,)).fetchone()[0]

    def last_undo(self, session_id: str) -> tuple[int, list[str]] | None:
        """The newest partial undo still in force: (turn, its row ids), or None."""
        with self.db.read() as conn:
            row = conn.execute("SELECT turn, action FROM change_reviews WHERE session_id = ? AND status = 'undone' "
                               "AND data IS NULL AND action > 0 ORDER BY action DESC LIMIT 1",
                               (session_id,)).fetchone()
            if row is None:
                return None
            ids = conn.execute("SELECT row_id FROM change_reviews WHERE session_id = ? AND turn = ? AND action = ? "
                               "AND status = 'undone'", (session_id, row[0], row[1])).fetchall()
        return row[0], [r[0] for r in ids]

    def suggested_turns(self, path: str | None = None, *, awaiting: bool = True) -> list[tuple[str, int]]:
        """(session, turn) with suggested rows still awaiting review (for ``path``, or any); with
        ``awaiting`` False, those with suggestions however they were decided."""
        query = ("SELECT DISTINCT session_id, turn FROM change_reviews WHERE "
                 + ("status = 'suggested'" if awaiting else "data IS NOT NULL"))
        args: tuple = ()
        if path is not None:
            query, args = query + " AND path = ?", (path,)
        with self.db.read() as conn:
            return [(r[0], r[1]) for r in conn.execute(query, args).fetchall()]

    # ----- the workspace after a partial undo or redo ------------------------------------------
    def snapshot(self, session_id: str, turn: int) -> str | None:
        with self.db.read() as conn:
            row = conn.execute("SELECT snapshot FROM change_review_turns WHERE session_id = ? AND turn = ?",
                               (session_id, turn)).fetchone()
        return row[0] if row else None

    def set_snapshot(self, session_id: str, turn: int, snapshot: str | None) -> None:
        with self.db.write() as conn:
            if snapshot is None:
                conn.execute("DELETE FROM change_review_turns WHERE session_id = ? AND turn = ?", (session_id, turn))
            else:
                conn.execute("INSERT INTO change_review_turns (session_id, turn, snapshot, updated) VALUES "
                             "(?, ?, ?, ?) ON CONFLICT (session_id, turn) DO UPDATE SET snapshot = excluded.snapshot, "
                             "updated = excluded.updated", (session_id, turn, snapshot, time.time()))
