"""Prompt history per notebook or directory, for the up and down keys of the front ends."""

from __future__ import annotations

import time

from .db import Database

MAX_ENTRIES = 200


class PromptHistory:
    """Stored in the workspace database, so every kernel on the workspace shares it."""

    def __init__(self, db: Database, limit: int = MAX_ENTRIES):
        self.db = db
        self.limit = limit

    def add(self, origin: str, prompt: str) -> bool:
        """Store a prompt; one equal to the previous (or blank) is not stored. True when stored."""
        if not prompt.strip():
            return False
        with self.db.write() as conn:
            last = conn.execute(
                "SELECT prompt FROM history WHERE origin = ? ORDER BY id DESC LIMIT 1", (origin,)
            ).fetchone()
            if last and last[0] == prompt:
                return False
            conn.execute("INSERT INTO history (origin, prompt, created) VALUES (?, ?, ?)",
                         (origin, prompt, time.time()))
            conn.execute(
                "DELETE FROM history WHERE origin = ? AND id NOT IN "
                "(SELECT id FROM history WHERE origin = ? ORDER BY id DESC LIMIT ?)",
                (origin, origin, self.limit),
            )
        return True

    def list(self, origin: str) -> list[str]:
        """Oldest first: the newest prompt is the last, the first one the up key reaches."""
        with self.db.read() as conn:
            rows = conn.execute("SELECT prompt FROM history WHERE origin = ? ORDER BY id", (origin,)).fetchall()
        return [r[0] for r in rows]
