"""``SessionStore``: the sessions of one workspace, kept in ``<workspace>/.nbagent/nbagent.db``.

Create, choose ("new", "continue", an id or a unique prefix), load exactly as
stored, list, show, delete, purge by age, fork, and export to / import from JSON.
A corrupt database file is reported (``problems``) and the listing is empty;
a database with a newer schema is refused (``NewerSchema``) and never altered.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..ids import new_id
from ..render.redaction import logger
from ..session.message_log import MessageLog
from ..session.model import Session
from . import transfer
from .backend import SqliteBackend
from .db import CorruptDatabase, Database, open_database, read_only_connection, workspace_db_path
from .messages import backfill_heads, read_messages, read_whole

__all__ = ["SessionStore", "SessionInfo", "SessionList", "SqliteBackend", "normalize_origin"]

log = logger("nbagent.store")

INFO_COLUMNS = (
    "id", "title", "model", "provider", "origin", "workspace", "created", "updated", "turns",
    "input_tokens", "output_tokens", "cost", "parent_id", "forked_at_turn", "cached_tokens",
    "image_tokens",
)
LOAD_COLUMNS = ("id", "title", "origin", "provider", "model", "todos", "turns", "input_tokens",
                "output_tokens", "cost", "summary_index", "cached_tokens", "image_tokens")


@dataclass
class SessionInfo:
    """One row of the session list."""

    id: str
    title: str | None
    model: str
    provider: str
    origin: str
    workspace: str
    created: float
    updated: float
    turns: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    parent_id: str | None = None
    forked_at_turn: int | None = None
    cached_tokens: int = 0
    """Of input_tokens, those the provider read from its prompt cache."""
    image_tokens: int = 0
    """Of input_tokens, the estimate for the images the requests carried."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SessionList(list):
    """A list of SessionInfo, newest first, with ``problems``: rows or files that could not be read."""

    def __init__(self, items=(), problems: list[str] | None = None):
        super().__init__(items)
        self.problems = problems or []


def normalize_origin(root: Path, origin: str | Path | None) -> str:
    """The notebook or directory a session started from, relative to the workspace when inside it."""
    if origin is None or str(origin) in ("", "."):
        return "."
    path = Path(origin).expanduser()
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.resolve().relative_to(root).as_posix() or "."
    except ValueError:
        return path.as_posix()


class SessionStore:
    def __init__(self, workspace_root: Any):
        # A Workspace, or a path (careful: a Path's own .root is "/").
        root = workspace_root if isinstance(workspace_root, (str, os.PathLike)) else workspace_root.root
        self.root = Path(root).expanduser().resolve()
        self.path = workspace_db_path(self.root)
        self.broken: CorruptDatabase | None = None
        try:
            self.db: Database | None = open_database(workspace=self.root)
        except CorruptDatabase as exc:  # NewerSchema is not caught: it is refused outright
            log.warning("%s", exc)
            self.db, self.broken = None, exc
        self.backend = SqliteBackend(self.db) if self.db else None

    def close(self) -> None:
        if self.db:
            self.db.close()

    def __enter__(self) -> "SessionStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _database(self) -> Database:
        if self.db is None:
            raise self.broken or StoreError(f"{self.path} is not open")
        return self.db

    def _backend(self) -> SqliteBackend:
        """The backend that makes a session's appends durable (the database must be readable)."""
        if self.backend is None:
            raise self.broken or StoreError(f"{self.path} is not open")
        return self.backend

    # -- choosing and loading ---------------------------------------------------------------

    def create(self, origin: str | Path | None = None, provider: str = "", model: str = "") -> Session:
        db, now = self._database(), time.time()
        session = Session(origin=normalize_origin(self.root, origin), provider=provider or "",
                          model=model or "", backend=self._backend())
        with db.write() as conn:
            conn.execute(
                "INSERT INTO sessions (id, created, updated, workspace, origin, provider, model) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session.id, now, now, str(self.root), session.origin, session.provider, session.model),
            )
        return session

    def open(self, selector: str | None = "new", origin: str | Path | None = None, *,
             provider: str | None = None, model: str | None = None) -> Session:
        """"new", "continue" (the newest session of ``origin``; a new one when it has none),
        or a session id / unique prefix. A given provider or model is recorded on the session."""
        selector = selector or "new"
        if selector == "new":
            return self.create(origin, provider or "", model or "")
        if selector == "continue":
            session_id = self.newest(origin)
            if session_id is None:
                return self.create(origin, provider or "", model or "")
        else:
            session_id = self.resolve(selector)
        session = self.load(session_id)
        changes = {k: v for k, v in (("provider", provider), ("model", model))
                   if v and v != getattr(session, k)}
        if changes:
            for key, value in changes.items():
                setattr(session, key, value)
            self._backend().update_session(session.id, **changes)
        return session

    def newest(self, origin: str | Path | None = None) -> str | None:
        with self._database().read() as conn:
            row = conn.execute(
                "SELECT id FROM sessions WHERE origin = ? ORDER BY updated DESC, id DESC LIMIT 1",
                (normalize_origin(self.root, origin),),
            ).fetchone()
        return row[0] if row else None

    def resolve(self, selector: str) -> str:
        """An exact id, or the one session whose id starts with ``selector``."""
        selector = selector.strip().lower()
        if not selector:
            raise StoreError("no session id given")
        with self._database().read() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (selector,)).fetchone():
                return selector
            rows = conn.execute(
                "SELECT id FROM sessions WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6",
                (len(selector), selector),
            ).fetchall()
        if not rows:
            raise StoreError(f"no session matches {selector!r} (nbagent sessions list shows them)")
        if len(rows) > 1:
            shown = ", ".join(r[0] for r in rows[:5])
            raise StoreError(f"{selector!r} matches several sessions ({shown}); give more characters")
        return rows[0][0]

    def load(self, session_id: str) -> Session:
        """The session exactly as stored: messages (tool-call ids, reasoning items), todos, counters."""
        with self._database().read() as conn:
            row = conn.execute(
                f"SELECT {', '.join(LOAD_COLUMNS)} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise StoreError(f"no session {session_id!r}")
            messages, heads, stale = read_messages(conn, session_id)
        fields = dict(zip(LOAD_COLUMNS, row))
        try:
            fields["todos"] = json.loads(fields["todos"])
        except (TypeError, ValueError) as exc:
            raise StoreError(f"session {session_id}: its todos cannot be read ({exc})") from exc
        log = MessageLog(messages, heads, functools.partial(self._read_whole, session_id))
        session = Session(log=log, backend=self._backend(), **fields)
        if stale:  # written before heads existed: read whole this time; give it its heads for the next
            self.backfill = threading.Thread(target=self._backfill, args=(session_id,), daemon=True,
                                             name="nbagent-heads-backfill")
            self.backfill.start()
        return session

    backfill: threading.Thread | None = None
    """The last backfill of heads started by ``load`` (tests and benchmarks join it)."""

    def _backfill(self, session_id: str) -> None:
        try:
            backfill_heads(self._database(), session_id)
        except (sqlite3.Error, StoreError) as exc:  # closed meanwhile, or locked: the next resume tries again
            log.debug("heads of %s not backfilled: %s", session_id, exc)

    def _read_whole(self, session_id: str, indexes: list[int]) -> dict[int, dict[str, Any]]:
        """A loaded session's outputs left in the store; read even after this store was closed."""
        try:
            try:
                with self._database().read() as conn:
                    return read_whole(conn, session_id, indexes)
            except sqlite3.ProgrammingError:  # closed: the session outlived its store (agent closed)
                with contextlib.closing(read_only_connection(self.path)) as conn:
                    return read_whole(conn, session_id, indexes)
        except sqlite3.Error as exc:  # gone, or a damaged page that shows only now
            raise StoreError(f"session {session_id}: its tool outputs cannot be read from {self.path} ({exc}); "
                             "nothing was changed") from exc

    # -- listing and housekeeping -----------------------------------------------------------

    def list(self, origin: str | Path | None = None, limit: int | None = None) -> SessionList:
        """Newest first. A row that cannot be read is skipped and named in ``.problems``."""
        if self.db is None:
            return SessionList([], [str(self.broken)])
        query = f"SELECT {', '.join(INFO_COLUMNS)}, json_valid(todos) FROM sessions"
        params: tuple = ()
        if origin is not None:
            query, params = query + " WHERE origin = ?", (normalize_origin(self.root, origin),)
        query += " ORDER BY updated DESC, id DESC"
        try:
            with self.db.read() as conn:
                rows = conn.execute(query, params).fetchall()
        except Exception as exc:  # a damaged page shows up only when it is read
            return SessionList([], [str(CorruptDatabase(self.path, exc))])
        items, problems = [], []
        for row in rows:
            try:
                items.append(_info_from_row(row))
            except (TypeError, ValueError) as exc:
                problems.append(f"session {row[0]!r} skipped: {exc}")
        for problem in problems:
            log.warning("%s", problem)
        return SessionList(items[:limit] if limit else items, problems)

    def info(self, selector: str) -> SessionInfo:
        session_id = self.resolve(selector)
        with self._database().read() as conn:
            row = conn.execute(f"SELECT {', '.join(INFO_COLUMNS)} FROM sessions WHERE id = ?",
                               (session_id,)).fetchone()
        return _info_from_row(row)

    def show(self, selector: str) -> dict[str, Any]:
        """Everything about one session: its row, todos, messages, tool calls and usage."""
        info = self.info(selector)
        session = self.load(info.id)
        return {
            "session": info.to_dict(), "todos": session.todos, "summary_index": session.summary_index,
            "messages": session.messages, "tool_calls": self.tool_calls(info.id), "usage": self.usage(info.id),
        }

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """Rows of the message table: idx, turn, created and the message itself."""
        with self._database().read() as conn:
            rows = conn.execute(
                "SELECT idx, turn, created, data FROM messages WHERE session_id = ? ORDER BY idx", (session_id,)
            ).fetchall()
        return [{"idx": i, "turn": t, "created": c, "message": json.loads(d)} for i, t, c, d in rows]

    def tool_calls(self, session_id: str) -> list[dict[str, Any]]:
        with self._database().read() as conn:
            return transfer.tool_call_rows(conn, session_id)

    def usage(self, session_id: str) -> list[dict[str, Any]]:
        with self._database().read() as conn:
            return transfer.usage_rows(conn, session_id)

    def delete(self, selector: str) -> str:
        session_id = self.resolve(selector)
        with self._database().write() as conn:
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return session_id  # its journal and checkpoints are the caller's (checkpoints.turn_guard.forget_sessions)

    def purge(self, days: float = 30) -> list[str]:
        """Delete sessions not updated for ``days`` days; 0 keeps everything. Returns the ids that went
        (their journals and checkpoints are the caller's to forget: checkpoints.turn_guard.forget_sessions)."""
        if days <= 0:
            return []
        cutoff = time.time() - days * 86_400
        with self._database().write() as conn:
            gone = [row[0] for row in conn.execute("SELECT id FROM sessions WHERE updated < ?", (cutoff,))]
            conn.execute("DELETE FROM sessions WHERE updated < ?", (cutoff,))
        return gone

    # -- fork, export, import ---------------------------------------------------------------

    def fork(self, session_id: str, up_to_turn: int | None = None) -> Session:
        """A new session starting with a copy of ``session_id``'s history up to and including a turn."""
        source = self.info(session_id)
        turn = source.turns if up_to_turn is None else up_to_turn
        if not 0 <= turn <= source.turns:
            raise StoreError(f"session {source.id} has turns 0..{source.turns}; cannot fork at turn {turn}")
        fork_id = new_id()
        with self._database().write() as conn:
            transfer.copy_session(conn, source.id, fork_id, turn, whole=turn == source.turns)
        return self.load(fork_id)

    def export_json(self, selector: str) -> str:
        return json.dumps(self.export_dict(selector), ensure_ascii=False, indent=1)

    def export_dict(self, selector: str) -> dict:
        """The export as plain data (what ``export_json`` writes): for a move to another store without
        rendering and reading it back as text (a batch moves every task's session)."""
        session_id = self.resolve(selector)
        with self._database().read() as conn:
            return transfer.export_session(conn, session_id)

    def move_from(self, source: Path, session_id: str) -> str:
        """Copy session ``session_id`` out of another workspace database file (``source``, at this
        schema) into this store, rows as stored (transfer.move_session). Its id is kept unless taken."""
        with self._database().read() as conn:  # the connection to itself, outside any transaction
            return transfer.move_session(conn, Path(source), session_id, str(self.root))

    def import_json(self, text: str | bytes | dict) -> str:
        """Add an exported session; it keeps its id unless that id is taken. Returns the id."""
        data = transfer.parse_export(text)
        with self._database().write() as conn:
            return transfer.import_session(conn, data, str(self.root))


def _info_from_row(row: tuple) -> SessionInfo:
    if len(row) > len(INFO_COLUMNS) and not row[-1]:
        raise ValueError("its todos are not valid JSON")
    values = dict(zip(INFO_COLUMNS, row))
    if not isinstance(values["id"], str) or not values["id"]:
        raise ValueError("no id")
    for name in ("turns", "input_tokens", "output_tokens", "cached_tokens", "image_tokens"):
        if not isinstance(values[name], int):
            raise ValueError(f"{name} is {values[name]!r}, not a whole number")
    for name in ("created", "updated"):
        if not isinstance(values[name], (int, float)):
            raise ValueError(f"{name} is {values[name]!r}, not a time")
    if values["cost"] is not None and not isinstance(values["cost"], (int, float)):
        raise ValueError(f"cost is {values['cost']!r}, not a number")
    return SessionInfo(**values)

