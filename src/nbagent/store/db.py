"""The workspace database: one SQLite file in ``.nbagent/``, changed only by numbered migrations.

Connection settings, and why:
- WAL: readers never block the writer, so a kernel listing sessions does not stall another kernel's turn.
- synchronous=NORMAL: under WAL a commit is written to the WAL file (the OS page cache) without an
  fsync; the fsync happens at checkpoints. A killed process (SIGKILL, a crashed kernel) loses nothing
  committed, because the data is already in the kernel's page cache; only a power cut or an OS crash
  can lose the last commits, and even then the database stays consistent. FULL would add an fsync to
  every step (milliseconds on most disks) for a failure mode the issue does not ask us to survive.
- On a network filesystem (NFS, SMB, ...) WAL is unsafe: a rollback journal with synchronous=FULL there
  (store/fs.py), or NBAGENT_STATE_DIR puts the database on a local disk.
- busy_timeout plus BEGIN IMMEDIATE: a writer takes the write lock up front and waits for another
  process's writer instead of failing midway; a few retries on top cover an exhausted timeout.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import platformdirs

from ..errors import StoreError
from ..workspace.state_dir import DATABASE, FILE_MODE, StateDirRefused, create_private, state_file
from ..workspace.atomic import write_temp
from .fs import journal_mode

BUSY_TIMEOUT_MS = 5_000
BEGIN_RETRIES = 5
DB_NAME = DATABASE
PAGE_SIZE = 16_384

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []
"""Append only: a migration's number is its position (1-based). Never edit a released one."""


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            workspace TEXT NOT NULL DEFAULT '',
            origin TEXT NOT NULL DEFAULT '.',
            provider TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            title TEXT,
            turns INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost REAL,
            todos TEXT NOT NULL DEFAULT '[]',
            summary_index INTEGER NOT NULL DEFAULT 0,
            parent_id TEXT,
            forked_at_turn INTEGER
        );
        CREATE INDEX sessions_by_origin ON sessions (origin, updated);
        CREATE INDEX sessions_by_updated ON sessions (updated);

        -- Clustered by (session_id, idx): a resume reads one session's messages as one run of
        -- pages, with no lookup per row (twice as fast as a rowid table at 5,000 short messages).
        -- The 16 KiB pages (set in _connect) keep kilobyte-sized messages from bloating this b-tree.
        CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            turn INTEGER NOT NULL,
            role TEXT NOT NULL,
            data TEXT NOT NULL,
            created REAL NOT NULL,
            PRIMARY KEY (session_id, idx)
        ) WITHOUT ROWID;

        CREATE TABLE tool_calls (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            turn INTEGER NOT NULL,
            call_id TEXT,
            name TEXT NOT NULL,
            arguments TEXT,
            status TEXT,
            duration_ms REAL,
            data TEXT NOT NULL,
            created REAL NOT NULL
        );
        CREATE INDEX tool_calls_by_session ON tool_calls (session_id, id);

        CREATE TABLE usage (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            turn INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cost REAL,
            created REAL NOT NULL
        );
        CREATE INDEX usage_by_session ON usage (session_id, turn);

        CREATE TABLE memory (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            norm TEXT NOT NULL UNIQUE,
            hits INTEGER NOT NULL DEFAULT 0,
            created REAL NOT NULL,
            used REAL
        );

        CREATE TABLE history (
            id INTEGER PRIMARY KEY,
            origin TEXT NOT NULL,
            prompt TEXT NOT NULL,
            created REAL NOT NULL
        );
        CREATE INDEX history_by_origin ON history (origin, id);
        """
    )


@migration
def m002_memory_knowledge(conn: sqlite3.Connection) -> None:
    """Hybrid project memory (nbagent.memory.index): categories, tags, expiry, chunks,
    one embedding per row, and a full-text index kept in sync by triggers."""
    for column in ("category TEXT NOT NULL DEFAULT 'fact'", "tags TEXT NOT NULL DEFAULT ''", "expires REAL",
                   "chunk_of INTEGER", "injected INTEGER NOT NULL DEFAULT 0", "embedding BLOB",
                   "embed_model TEXT", "embed_dim INTEGER"):
        conn.execute(f"ALTER TABLE memory ADD COLUMN {column}")
    # The first kinds map onto the categories; the old kind survives as a tag.
    conn.execute("UPDATE memory SET category = CASE kind WHEN 'decision' THEN 'decision' "
                 "WHEN 'command' THEN 'snippet' ELSE 'fact' END, "
                 "tags = CASE kind WHEN 'gotcha' THEN 'gotcha' WHEN 'command' THEN 'command' ELSE '' END")
    conn.execute("CREATE INDEX memory_by_expiry ON memory (expires)")
    conn.execute("CREATE TABLE memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    try:
        conn.execute("CREATE VIRTUAL TABLE memory_fts USING fts5(text, tags, content='memory', "
                     "content_rowid='id', tokenize='porter unicode61')")
    except sqlite3.OperationalError:  # an SQLite built without FTS5: search falls back to LIKE
        return
    # One execute() each: _run_script splits on ";", which trigger bodies contain.
    for statement in (
        "CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory BEGIN "
        "INSERT INTO memory_fts (rowid, text, tags) VALUES (new.id, new.text, new.tags); END",
        "CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory BEGIN "
        "INSERT INTO memory_fts (memory_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags); END",
        "CREATE TRIGGER memory_fts_update AFTER UPDATE OF text, tags ON memory BEGIN "
        "INSERT INTO memory_fts (memory_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags); "
        "INSERT INTO memory_fts (rowid, text, tags) VALUES (new.id, new.text, new.tags); END",
        "INSERT INTO memory_fts (memory_fts) VALUES ('rebuild')",
    ):
        conn.execute(statement)


@migration
def m003_context_sources(conn: sqlite3.Connection) -> None:
    # Attached context (nbagent.attached): a source and its snapshot share a row, so the absorb before a
    # turn is one join with what the session has seen. scope '' is the workspace, else a session id.
    _run_script(
        conn,
        """
        CREATE TABLE context_sources (
            scope TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            spec TEXT NOT NULL DEFAULT '',
            why TEXT NOT NULL DEFAULT '',
            every REAL,
            wake INTEGER NOT NULL DEFAULT 0,
            muted INTEGER NOT NULL DEFAULT 0,
            created REAL NOT NULL,
            text TEXT,
            revision TEXT NOT NULL DEFAULT '',
            serial INTEGER NOT NULL DEFAULT 0,
            summary TEXT NOT NULL DEFAULT '',
            error TEXT,
            error_since REAL,
            fetched_at REAL,
            checked_at REAL,
            PRIMARY KEY (scope, name)
        );

        -- What one session's model was last told about a source (written after the notes are saved).
        CREATE TABLE context_seen (
            session_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            name TEXT NOT NULL,
            revision TEXT NOT NULL DEFAULT '',
            serial INTEGER NOT NULL DEFAULT 0,
            error_since REAL,
            PRIMARY KEY (session_id, scope, name)
        );

        -- A source the user removed from a session: an automatic attach must not bring it back.
        CREATE TABLE context_declined (
            session_id TEXT NOT NULL,
            name TEXT NOT NULL,
            created REAL NOT NULL,
            PRIMARY KEY (session_id, name)
        );
        """
    )


@migration
def m004_message_heads(conn: sqlite3.Connection) -> None:
    """A message that pruning would cut down (a long tool output, an assistant's tool calls) also stored
    as its ``head`` with the size of what it omits: a resume decodes heads and leaves the rest in
    ``data`` until read (store/messages.py). Rows written before this have no head and are read whole."""
    conn.execute("ALTER TABLE messages ADD COLUMN head TEXT")
    conn.execute("ALTER TABLE messages ADD COLUMN omitted_chars INTEGER")


@migration
def m005_cached_tokens(conn: sqlite3.Connection) -> None:
    """Prompt tokens the provider read from its cache (billed at a fraction of the input price), per
    model call and per session; calls made before this count none."""
    conn.execute("ALTER TABLE usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE sessions ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0")


@migration
def m006_change_reviews(conn: sqlite3.Connection) -> None:
    """The review of a turn's changes (nbagent.checkpoints.review): each row kept, undone or suggested, and
    the workspace's snapshot after the turn's last partial undo or redo (what a whole-turn undo starts
    from). A row with no line here is pending. ``action`` numbers the review actions of a session: redo
    takes back the newest partial undo. ``data`` holds a suggested row (review before writing) and its
    notebook operations, since no checkpoint holds what was never written."""
    _run_script(
        conn,
        """
        CREATE TABLE change_reviews (
            session_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            row_id TEXT NOT NULL,
            status TEXT NOT NULL,
            action INTEGER NOT NULL DEFAULT 0,
            path TEXT NOT NULL DEFAULT '',
            data TEXT,
            updated REAL NOT NULL,
            PRIMARY KEY (session_id, turn, row_id)
        );
        CREATE INDEX change_reviews_by_path ON change_reviews (path, status);

        CREATE TABLE change_review_turns (
            session_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            updated REAL NOT NULL,
            PRIMARY KEY (session_id, turn)
        );
        """
    )


@migration
def m007_image_tokens(conn: sqlite3.Connection) -> None:
    """Of the input tokens, the estimate for the images a request carried (nbagent.images), per model
    call and per session; calls made before this count none."""
    conn.execute("ALTER TABLE usage ADD COLUMN image_tokens INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE sessions ADD COLUMN image_tokens INTEGER NOT NULL DEFAULT 0")


SCHEMA_VERSION = len(MIGRATIONS)


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    # Not executescript(): it commits first, which would end the migration's transaction.
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


class Database:
    """One connection to the workspace database, shared by the threads of one process.

    A lock serialises use of the connection: the agent's worker thread appends
    steps while tools (in their own threads) save todos or memory.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.RLock()
        self.conn = _connect(self.path)
        try:
            _refuse_newer_schema(self.conn, self.path)
            # WAL changes the file header, so it comes only after the schema check passed.
            # On a network filesystem WAL is unsafe: a rollback journal there (see store/fs.py).
            self.journal = journal_mode(self.path)
            _retry_locked(lambda: self.conn.execute(f"PRAGMA journal_mode={self.journal}"))
            # NORMAL is safe under WAL only; a rollback journal needs FULL to survive a crash.
            self.conn.execute(f"PRAGMA synchronous={'NORMAL' if self.journal == 'WAL' else 'FULL'}")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.OperationalError as exc:  # locked, unwritable: the file itself is fine
            self.conn.close()
            raise StoreError(f"{self.path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise CorruptDatabase(self.path, exc) from exc
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self.conn

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, committed (durable against a process kill) when the block ends.

        Nested on one thread, the inner blocks join the outer transaction: a step's messages,
        tool calls and usage then cost one commit, not four.
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            begin_immediate(self.conn)
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                # SQLite may have rolled back already (it does on SQLITE_BUSY, IOERR, FULL, NOMEM inside
                # a transaction): a second ROLLBACK would fail and hide the error that matters.
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")
            finally:
                self._depth = 0

    _depth = 0

    def _migrate(self) -> None:
        # Already at this version, the common case: no write lock, which every process opening the
        # database (kernels, batch workers importing sessions) would otherwise queue for.
        if _recorded_version(self.conn) == SCHEMA_VERSION:
            return
        with self.write() as conn:
            _apply_migrations(conn, self.path)


def _apply_migrations(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the database up to SCHEMA_VERSION inside the caller's write transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied REAL NOT NULL)"
    )
    # Read again inside the write lock: another process may have migrated meanwhile.
    current = _recorded_version(conn)
    if current > SCHEMA_VERSION:
        raise NewerSchema(path, current)
    for number, step in enumerate(MIGRATIONS[current:], start=current + 1):
        step(conn)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)",
            (number, step.__name__, time.time()),
        )


_template: bytes | None = None
_template_lock = threading.Lock()


def template_bytes() -> bytes:
    """An empty database at the current schema, as the bytes of its file (rollback journal, so the one
    file is the whole database). Made once per process by running the migrations.

    Running them cost 3.5 ms of CPU per new database (tables, indexes, the full-text index and its
    triggers) against 1 ms for a copy of this; a batch makes one per task.
    """
    global _template
    with _template_lock:
        if _template is None:
            with tempfile.TemporaryDirectory(prefix="nbagent-db-") as tmp:
                path = Path(tmp) / DB_NAME
                conn = _connect(path)
                try:
                    conn.execute("PRAGMA journal_mode=DELETE")
                    conn.execute("BEGIN IMMEDIATE")
                    _apply_migrations(conn, path)
                    conn.execute("COMMIT")
                finally:
                    conn.close()
                _template = path.read_bytes()
        return _template


def create_from_template(path: Path) -> bool:
    """Make the database file ``path`` (absent) whole, from the template; False if another process made
    it first or the filesystem cannot (the caller then makes an empty file and migrates it).

    The file appears complete or not at all: a private temporary file is written, then hard-linked
    to ``path`` (which fails if ``path`` exists, a link included), so a process opening it meanwhile
    never sees half a database.
    """
    data = template_bytes()
    try:  # a name the start-up sweep knows, should this process die before the unlink
        temp = write_temp(path, data, mode=FILE_MODE, fsync=False)
    except OSError:
        return False
    try:
        os.link(temp, path)
        return True
    except OSError:  # made by another process meanwhile, or no hard links here
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves (the sqlite3 module's implicit
    # transactions would start a DEFERRED one, which can fail with SQLITE_BUSY at its first write).
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # Takes effect only when the file is created (an existing database keeps its page size).
    conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
    return conn


def begin_immediate(conn: sqlite3.Connection) -> None:
    """BEGIN IMMEDIATE, retried while another process holds the database past the busy timeout."""
    _retry_locked(lambda: conn.execute("BEGIN IMMEDIATE"))


def _retry_locked(statement) -> None:
    """Run ``statement``, retrying while another process holds the database.

    Switching a new file to WAL needs an exclusive lock and SQLite does not call
    the busy handler for it, so processes opening a fresh database together
    must retry by hand; BEGIN IMMEDIATE gets the same treatment past its timeout.
    """
    delay, deadline = 0.02, time.monotonic() + BEGIN_RETRIES * BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            statement()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise StoreError(f"the session database stayed locked for "
                                 f"{BEGIN_RETRIES * BUSY_TIMEOUT_MS / 1000:.0f} s: {exc}") from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _recorded_version(conn: sqlite3.Connection) -> int:
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not has_table:
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]


def _refuse_newer_schema(conn: sqlite3.Connection, path: Path) -> None:
    version = _recorded_version(conn)
    if version > SCHEMA_VERSION:
        raise NewerSchema(path, version)


class NewerSchema(StoreError):
    """The database was written by a newer nbagent; it is refused and never altered."""

    def __init__(self, path: Path, version: int):
        super().__init__(
            f"{path} has schema version {version}, newer than this nbagent understands "
            f"({SCHEMA_VERSION}). It was left untouched: upgrade nbagent to use it."
        )
        self.version = version


class CorruptDatabase(StoreError):
    """The file is not a readable SQLite database; it is reported and left as it is."""

    def __init__(self, path: Path, exc: Exception):
        super().__init__(
            f"{path} cannot be read as a database ({exc}). It was left untouched: move it aside "
            "(for example to nbagent.db.broken) and nbagent starts a fresh one."
        )


def workspace_db_path(workspace_root: str | Path) -> Path:
    """``<workspace>/.nbagent/nbagent.db`` (or under ``$NBAGENT_STATE_DIR``), private (0600) in a
    private folder (0700, with a ``.gitignore`` of ``*``) made on first use.

    Raises ``StateDirRefused`` (a StoreError) when the folder or the database is a link or
    cannot be made, so the agent keeps its session in memory instead.
    """
    path = state_file(workspace_root, DATABASE)
    if not os.path.lexists(path):
        create_from_template(path)
    try:
        create_private(path)
    except OSError as exc:
        raise StateDirRefused(f"cannot create {path} ({exc.strerror or exc})") from exc
    return path


def global_memory_path() -> Path:
    """The user's global memory database (NBAGENT_DATA_DIR overrides the platformdirs data dir)."""
    base = os.environ.get("NBAGENT_DATA_DIR") or platformdirs.user_data_dir("nbagent")
    directory = Path(base)
    directory.mkdir(parents=True, exist_ok=True)
    return directory / "memory.db"


def open_database(*, workspace: str | Path | None = None, global_memory: bool = False) -> Database:
    """The one way nbagent opens SQLite: the database in ``workspace``'s state directory (checked by
    nbagent.workspace.state_dir), the user's global memory, or (neither) one that lives in memory only."""
    if workspace is not None:
        return Database(workspace_db_path(workspace))
    if global_memory:
        return Database(global_memory_path())
    return Database(":memory:")


def read_only_connection(path: Path) -> sqlite3.Connection:
    """A plain read-only connection to ``path``, for a reader that outlived its Database (closed)."""
    return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
