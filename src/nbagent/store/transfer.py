"""Copying sessions: fork inside the database, export to JSON and import from it.

The export holds everything a session is: its row, its messages with the turn
each belongs to, its tool calls and its usage. Import checks the whole file
with pydantic before writing anything, so a bad file changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pydantic

from ..errors import StoreError
from ..ids import new_id
from .backend import dump
from .db import SCHEMA_VERSION, begin_immediate
from .messages import message_row

FORMAT = "nbagent.session"
VERSION = 1
SESSION_FIELDS = (
    "id", "created", "updated", "workspace", "origin", "provider", "model", "title", "turns",
    "input_tokens", "output_tokens", "cost", "todos", "summary_index", "parent_id", "forked_at_turn",
    "cached_tokens", "image_tokens",
)


class ExportedSession(pydantic.BaseModel):
    id: str
    created: float
    updated: float
    workspace: str = ""
    origin: str = "."
    provider: str = ""
    model: str = ""
    title: str | None = None
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    todos: list[dict[str, Any]] = []
    summary_index: int = 0
    parent_id: str | None = None
    forked_at_turn: int | None = None
    cached_tokens: int = 0
    image_tokens: int = 0


class ExportedMessage(pydantic.BaseModel):
    turn: int
    created: float
    message: dict[str, Any]


class ExportedToolCall(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")  # whatever else the loop recorded is kept
    turn: int = 0
    name: str
    call_id: str | None = None
    arguments: Any = None
    status: str | None = None
    duration_ms: float | None = None
    created: float | None = None


class ExportedUsage(pydantic.BaseModel):
    turn: int
    input_tokens: int
    output_tokens: int
    cost: float | None = None
    created: float
    cached_tokens: int = 0
    image_tokens: int = 0


class Export(pydantic.BaseModel):
    format: str
    version: int
    session: ExportedSession
    messages: list[ExportedMessage] = []
    tool_calls: list[ExportedToolCall] = []
    usage: list[ExportedUsage] = []


def copy_session(conn: sqlite3.Connection, source_id: str, fork_id: str, turn: int, whole: bool) -> None:
    """Fork: a new row and a copy of the messages of turns <= ``turn`` (a prefix, as turns only grow)."""
    now = time.time()
    conn.execute(
        "INSERT INTO sessions (id, created, updated, workspace, origin, provider, model, title, turns, todos, "
        "summary_index, parent_id, forked_at_turn) "
        "SELECT ?, ?, ?, workspace, origin, provider, model, title, ?, CASE WHEN ? THEN todos ELSE '[]' END, "
        "summary_index, id, ? FROM sessions WHERE id = ?",
        (fork_id, now, now, turn, whole, turn, source_id),
    )
    copied = conn.execute(
        "INSERT INTO messages (session_id, idx, turn, role, data, head, omitted_chars, created) "
        "SELECT ?, idx, turn, role, data, head, omitted_chars, created FROM messages "
        "WHERE session_id = ? AND turn <= ?",
        (fork_id, source_id, turn),
    ).rowcount
    # A /compact summary that lies beyond the copied part does not apply to the fork.
    conn.execute("UPDATE sessions SET summary_index = 0 WHERE id = ? AND summary_index >= ?", (fork_id, copied))


def tool_call_rows(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT turn, call_id, name, arguments, status, duration_ms, data, created FROM tool_calls "
        "WHERE session_id = ? ORDER BY id", (session_id,),
    ).fetchall()
    out = []
    for turn, call_id, name, arguments, status, duration_ms, data, created in rows:
        record = json.loads(data)
        record.update(turn=turn, call_id=call_id, name=name, arguments=arguments, status=status,
                      duration_ms=duration_ms, created=created)
        out.append(record)
    return out


def usage_rows(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT turn, input_tokens, output_tokens, cost, created, cached_tokens, image_tokens FROM usage "
        "WHERE session_id = ? ORDER BY id", (session_id,),
    ).fetchall()
    keys = ("turn", "input_tokens", "output_tokens", "cost", "created", "cached_tokens", "image_tokens")
    return [dict(zip(keys, row)) for row in rows]


def export_session(conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    row = conn.execute(f"SELECT {', '.join(SESSION_FIELDS)} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise StoreError(f"no session {session_id!r}")
    session = dict(zip(SESSION_FIELDS, row))
    session["todos"] = json.loads(session["todos"])
    messages = [
        {"turn": turn, "created": created, "message": json.loads(data)}
        for turn, created, data in conn.execute(
            "SELECT turn, created, data FROM messages WHERE session_id = ? ORDER BY idx", (session_id,)
        )
    ]
    return {
        "format": FORMAT, "version": VERSION, "session": session, "messages": messages,
        "tool_calls": tool_call_rows(conn, session_id), "usage": usage_rows(conn, session_id),
    }


def parse_export(text: str | bytes | dict) -> Export:
    try:
        raw = json.loads(text) if isinstance(text, (str, bytes)) else text
    except ValueError as exc:
        raise StoreError(f"not a session export: the JSON cannot be read ({exc})") from exc
    try:
        data = Export.model_validate(raw)
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise StoreError(f"not a session export: {problems}") from None
    if data.format != FORMAT or data.version > VERSION:
        raise StoreError(f"not a session export this nbagent reads (format {data.format!r}, version "
                         f"{data.version}; expected {FORMAT!r}, version <= {VERSION})")
    return data


def import_session(conn: sqlite3.Connection, data: Export, workspace: str) -> str:
    """Write an export as a new session; its id is kept unless taken. Returns the id used."""
    session = data.session.model_dump()
    taken = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session["id"],)).fetchone()
    if taken or not session["id"]:
        session["id"] = new_id()
    session["workspace"] = workspace
    session["todos"] = dump(session["todos"])
    conn.execute(
        f"INSERT INTO sessions ({', '.join(SESSION_FIELDS)}) VALUES ({', '.join('?' * len(SESSION_FIELDS))})",
        tuple(session[k] for k in SESSION_FIELDS),
    )
    sid = session["id"]
    conn.executemany(
        "INSERT INTO messages (session_id, idx, turn, role, data, head, omitted_chars, created) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(sid, i, m.turn, *message_row(m.message), m.created) for i, m in enumerate(data.messages)],
    )
    for call in data.tool_calls:
        record = call.model_dump()
        created = record.pop("created") or time.time()
        arguments = record["arguments"]
        conn.execute(
            "INSERT INTO tool_calls (session_id, turn, call_id, name, arguments, status, duration_ms, data, "
            "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, call.turn, call.call_id, call.name,
             arguments if arguments is None or isinstance(arguments, str) else dump(arguments),
             call.status, call.duration_ms, dump(record), created),
        )
    conn.executemany(
        "INSERT INTO usage (session_id, turn, input_tokens, output_tokens, cached_tokens, image_tokens, cost, "
        "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(sid, u.turn, u.input_tokens, u.output_tokens, u.cached_tokens, u.image_tokens, u.cost, u.created)
         for u in data.usage],
    )
    return sid


def move_session(conn: sqlite3.Connection, source: Path, session_id: str, workspace: str) -> str:
    """Copy one session from the workspace database file ``source`` into ``conn``'s, in SQL: rows go
    across as stored, without decoding, validating and encoding them again as an export does (a
    batch moves every task's session out of its copy). Both files must be at the current schema
    (a copy made by this nbagent is). Its id is kept unless taken. Returns the id used.

    ATTACH cannot run inside a transaction: the caller holds the connection (not a transaction).
    """
    conn.execute("ATTACH DATABASE ? AS moved", (str(source),))
    try:
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM moved.schema_migrations").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise StoreError(f"{source} is at schema {version}, not {SCHEMA_VERSION}: export and import it instead")
        # Rows are copied as stored, so the file must be one nbagent made: the same tables, indexes
        # and triggers as this one (a repository that commits a .nbagent/ of its own gives its copy
        # that file, with whatever triggers or views it holds).
        if _schema(conn, "moved") != _schema(conn, "main"):
            raise StoreError(f"{source} is not a database as this nbagent makes them (another schema): "
                             "export and import it instead")
        if conn.execute("SELECT 1 FROM moved.sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise StoreError(f"no session {session_id!r} in {source}")
        new = session_id
        if conn.execute("SELECT 1 FROM main.sessions WHERE id = ?", (session_id,)).fetchone():
            new = new_id()
        fields = [f for f in SESSION_FIELDS if f not in ("id", "workspace")]
        begin_immediate(conn)
        try:
            conn.execute(f"INSERT INTO main.sessions (id, workspace, {', '.join(fields)}) "
                         f"SELECT ?, ?, {', '.join(fields)} FROM moved.sessions WHERE id = ?",
                         (new, workspace, session_id))
            conn.execute("INSERT INTO main.messages (session_id, idx, turn, role, data, head, omitted_chars, created) "
                         "SELECT ?, idx, turn, role, data, head, omitted_chars, created FROM moved.messages "
                         "WHERE session_id = ? ORDER BY idx", (new, session_id))
            conn.execute("INSERT INTO main.tool_calls (session_id, turn, call_id, name, arguments, status, "
                         "duration_ms, data, created) SELECT ?, turn, call_id, name, arguments, status, duration_ms, "
                         "data, created FROM moved.tool_calls WHERE session_id = ? ORDER BY id", (new, session_id))
            conn.execute("INSERT INTO main.usage (session_id, turn, input_tokens, output_tokens, cached_tokens, "
                         "image_tokens, cost, created) SELECT ?, turn, input_tokens, output_tokens, cached_tokens, "
                         "image_tokens, cost, created "
                         "FROM moved.usage "
                         "WHERE session_id = ? ORDER BY id", (new, session_id))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return new
    finally:
        conn.execute("DETACH DATABASE moved")


def _schema(conn: sqlite3.Connection, name: str) -> set[tuple]:
    return set(conn.execute(f"SELECT type, name, tbl_name, sql FROM {name}.sqlite_master "
                            "WHERE name NOT LIKE 'sqlite_%'").fetchall())
