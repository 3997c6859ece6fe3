"""The workspace's SQLite store: sessions, messages, tool calls, usage, project memory, prompt history."""

from .backend import SqliteBackend
from .db import CorruptDatabase, Database, NewerSchema, workspace_db_path
from .sessions import SessionInfo, SessionList, SessionStore, normalize_origin

__all__ = [
    "CorruptDatabase", "Database", "NewerSchema", "SessionInfo", "SessionList", "SessionStore",
    "SqliteBackend", "normalize_origin", "workspace_db_path",
]
