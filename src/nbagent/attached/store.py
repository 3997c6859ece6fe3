"""ContextStore: attached sources, their snapshots and what each session has seen, in the workspace database.

Every write is one short transaction, so a push from the CLI, the poller in another kernel and the
absorb before a turn can share the file (SQLite WAL). A session sees its own sources and the
workspace's, its own shadowing a workspace source of the same name.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from ..store.db import Database
from ..workspace.trust import is_trusted
from .records import KINDS, Output, Snapshot, Source, SourceError, check_name

_COLUMNS = ("scope, name, kind, spec, why, every, wake, muted, created, text, revision, serial, summary, "
            "error, error_since, fetched_at, checked_at")
ERROR_MAX = 2_000


@dataclass(frozen=True)
class Seen:
    """What a session's model was last told about a source."""

    scope: str
    name: str
    revision: str
    serial: int
    error_since: float | None


class ContextStore:
    """``root``: the workspace whose trust record marks command sources trusted or not (None: unmarked,
    for readers that never run a command; the poller and fetch check the record themselves)."""

    def __init__(self, db: Database, root: str | Path | None = None):
        self.db = db
        self.root = root

    def _source(self, row: tuple) -> Source:
        source = _source(row)
        if self.root is not None and source.kind == "command" and not is_trusted(self.root, source.spec):
            return replace(source, trusted=False)
        return source

    # ----- reading ---------------------------------------------------------------------------
    def sources(self, session_id: str | None) -> list[Source]:
        """The sources ``session_id`` sees (the workspace's alone for None), session ones first."""
        with self.db.read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM context_sources WHERE scope IN ('', ?) "
                                "ORDER BY scope = '', name", (session_id or "",)).fetchall()
        found: dict[str, Source] = {}
        for row in rows:
            found.setdefault(row[1], self._source(row))
        return sorted(found.values(), key=lambda s: s.name)

    def get(self, name: str, session_id: str | None) -> Source | None:
        for source in self.sources(session_id):
            if source.name == name:
                return source
        return None

    def find(self, name: str, session_id: str | None) -> Source:
        source = self.get(name, session_id)
        if source is None:
            raise SourceError(f"no attached source named {name!r}; /context lists them")
        return source

    def polled(self, active_since: float = 0.0) -> list[Source]:
        """The command and file sources to keep fresh: the workspace's, and those of sessions used since
        ``active_since`` (an old session's ``nvidia-smi`` must not run forever); muted ones left out."""
        columns = ", ".join(f"s.{c}" for c in _COLUMNS.split(", "))
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {columns} FROM context_sources s LEFT JOIN sessions ss ON ss.id = s.scope "
                "WHERE s.kind IN ('command', 'file') AND s.muted = 0 AND (s.scope = '' OR ss.updated >= ?)",
                (active_since,)).fetchall()
        return [self._source(r) for r in rows]

    def seen(self, session_id: str) -> list[Seen]:
        with self.db.read() as conn:
            rows = conn.execute("SELECT scope, name, revision, serial, error_since FROM context_seen "
                                "WHERE session_id = ?", (session_id,)).fetchall()
        return [Seen(*r) for r in rows]

    def is_declined(self, session_id: str, name: str) -> bool:
        with self.db.read() as conn:
            return conn.execute("SELECT 1 FROM context_declined WHERE session_id = ? AND name = ?",
                                (session_id, name)).fetchone() is not None

    # ----- attaching -------------------------------------------------------------------------
    def attach(self, name: str, kind: str, *, scope: str = "", spec: str = "", why: str = "",
               every: float | None = None, wake: bool = False, auto: bool = False) -> Source:
        """Attach (or redefine, keeping its snapshot) a source. ``auto``: refused if the user declined it."""
        check_name(name)
        if kind not in KINDS:
            raise SourceError(f"unknown source kind {kind!r}: one of {', '.join(KINDS)}")
        if every is not None and not every > 0:
            raise SourceError("every must be a positive number of seconds")
        if kind in ("command", "file", "variable") and not spec.strip():
            raise SourceError(f"a {kind} source needs its {'command' if kind == 'command' else kind}")
        with self.db.write() as conn:
            if scope and _declined(conn, scope, name):
                if auto:
                    raise SourceError(f"{name!r} was removed from this session; attach it by hand to have it back")
                conn.execute("DELETE FROM context_declined WHERE session_id = ? AND name = ?", (scope, name))
            conn.execute(
                "INSERT INTO context_sources (scope, name, kind, spec, why, every, wake, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET kind = excluded.kind, "
                "spec = excluded.spec, why = excluded.why, every = excluded.every, wake = excluded.wake, "
                "muted = 0", (scope, name, kind, spec, why, every, int(wake), time.time()))
        return self.find(name, scope or None)

    def set_muted(self, name: str, session_id: str | None, muted: bool) -> Source:
        source = self.find(name, session_id)
        with self.db.write() as conn:
            conn.execute("UPDATE context_sources SET muted = ? WHERE scope = ? AND name = ?",
                         (int(muted), source.scope, name))
        return self.find(name, session_id)

    def remove(self, name: str, session_id: str | None) -> Source:
        """Detach a source; a session's own leaves a "declined" marker so an automatic attach stays away."""
        source = self.find(name, session_id)
        with self.db.write() as conn:
            conn.execute("DELETE FROM context_sources WHERE scope = ? AND name = ?", (source.scope, name))
            if source.scope:
                conn.execute("INSERT OR REPLACE INTO context_declined (session_id, name, created) VALUES (?, ?, ?)",
                             (source.scope, name, time.time()))
        return source

    # ----- snapshots -------------------------------------------------------------------------
    def record(self, scope: str, name: str, output: Output, now: float | None = None) -> str:
        """Store a good text: "new" (a new revision), "same", or "gone" (removed meanwhile)."""
        from .records import revision_of

        now = time.time() if now is None else now
        revision = revision_of(output.text)
        with self.db.write() as conn:
            row = conn.execute("SELECT revision FROM context_sources WHERE scope = ? AND name = ?",
                               (scope, name)).fetchone()
            if row is None:
                return "gone"
            if row[0] == revision:
                conn.execute("UPDATE context_sources SET error = NULL, error_since = NULL, fetched_at = ?, "
                             "checked_at = ? WHERE scope = ? AND name = ?", (now, now, scope, name))
                return "same"
            conn.execute("UPDATE context_sources SET text = ?, revision = ?, serial = serial + 1, summary = ?, "
                         "error = NULL, error_since = NULL, fetched_at = ?, checked_at = ? "
                         "WHERE scope = ? AND name = ?",
                         (output.text, revision, output.summary, now, now, scope, name))
        return "new"

    def record_error(self, scope: str, name: str, error: str, now: float | None = None) -> None:
        """The source failed: keep its last good text, remember since when it fails."""
        now = time.time() if now is None else now
        with self.db.write() as conn:
            conn.execute("UPDATE context_sources SET error = ?, error_since = COALESCE(error_since, ?), "
                         "checked_at = ? WHERE scope = ? AND name = ?",
                         (error[:ERROR_MAX] or "failed", now, now, scope, name))

    def push(self, name: str, output: Output, *, session_id: str | None = None, why: str = "",
             kind: str = "push", wake: bool = False) -> str:
        """Write a pushed source's text, attaching it (to the session, else the workspace) if new."""
        source = self.get(check_name(name), session_id)
        if source is None:
            source = self.attach(name, kind, scope=session_id or "", why=why or "pushed", wake=wake)
        elif source.kind in ("command", "file"):
            raise SourceError(f"{name!r} is a {source.kind} source: the poller writes it, a push cannot")
        return self.record(source.scope, name, output)

    # ----- what sessions have seen -------------------------------------------------------------
    def absorb_rows(self, session_id: str) -> list[tuple]:
        """One query for the absorber: each visible source with the session's seen row (or NULLs)."""
        with self.db.read() as conn:
            return conn.execute(
                "SELECT s.scope, s.name, s.kind, s.spec, s.why, s.muted, s.text IS NOT NULL, s.revision, s.serial, "
                "s.summary, s.error, s.error_since, s.wake, c.revision, c.serial, c.error_since "
                "FROM context_sources s LEFT JOIN context_seen c "
                "ON c.session_id = ? AND c.scope = s.scope AND c.name = s.name "
                "WHERE s.scope IN ('', ?) ORDER BY s.scope = '', s.name", (session_id, session_id)).fetchall()

    def orphans(self, session_id: str) -> list[Seen]:
        """Seen rows whose source is gone (removed since the session was last told)."""
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT c.scope, c.name, c.revision, c.serial, c.error_since FROM context_seen c "
                "WHERE c.session_id = ? AND NOT EXISTS (SELECT 1 FROM context_sources s "
                "WHERE s.scope = c.scope AND s.name = c.name)", (session_id,)).fetchall()
        return [Seen(*r) for r in rows]

    def commit_seen(self, session_id: str, seen: Iterable[Seen], forgotten: Iterable[Seen] = ()) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO context_seen (session_id, scope, name, revision, serial, error_since) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(session_id, s.scope, s.name, s.revision, s.serial, s.error_since) for s in seen])
            conn.executemany("DELETE FROM context_seen WHERE session_id = ? AND scope = ? AND name = ?",
                             [(session_id, s.scope, s.name) for s in forgotten])

    def move(self, from_session: str, to_session: str) -> int:
        """A fork or continue into a new session takes the old one's sources, what it had seen, its
        declined markers; returns the number of sources moved."""
        with self.db.write() as conn:
            moved = conn.execute(
                f"INSERT OR IGNORE INTO context_sources ({_COLUMNS}) SELECT ?, {_COLUMNS.split(', ', 1)[1]} "
                "FROM context_sources WHERE scope = ?", (to_session, from_session)).rowcount
            conn.execute("INSERT OR IGNORE INTO context_seen (session_id, scope, name, revision, serial, error_since) "
                         "SELECT ?, CASE scope WHEN '' THEN '' ELSE ? END, name, revision, serial, error_since "
                         "FROM context_seen WHERE session_id = ?", (to_session, to_session, from_session))
            conn.execute("INSERT OR IGNORE INTO context_declined (session_id, name, created) "
                         "SELECT ?, name, created FROM context_declined WHERE session_id = ?",
                         (to_session, from_session))
        return moved


def _declined(conn: sqlite3.Connection, session_id: str, name: str) -> bool:
    return conn.execute("SELECT 1 FROM context_declined WHERE session_id = ? AND name = ?",
                        (session_id, name)).fetchone() is not None


def _source(row: tuple) -> Source:
    (scope, name, kind, spec, why, every, wake, muted, created, text, revision, serial, summary, error,
     error_since, fetched_at, checked_at) = row
    snapshot = Snapshot(text=text, revision=revision, serial=serial, summary=summary, error=error,
                        error_since=error_since, fetched_at=fetched_at, checked_at=checked_at)
    return Source(name=name, kind=kind, scope=scope, spec=spec, why=why, every=every, wake=bool(wake),
                  muted=bool(muted), created=created, snapshot=snapshot)
