"""Hybrid project memory: full-text and embedding search over the memory table, and its upkeep.

Rows live in the workspace database's ``memory`` table (migration m002 in
nbagent.store.db): text, category, tags, hit and injection counts, an expiry, and one
embedding per row. Search combines, per row:

- keyword: the IDF-weighted share of the query's terms the row contains, found with
  FTS5 (porter, unicode61; one MATCH per term); with LIKE-style ``instr`` where FTS5 is
  missing or a MATCH fails;
- cosine: the query embedding against the row's, calibrated (nbagent.memory.embeddings)
  so that text unrelated to the query scores about 0.

score = 0.7 * cosine + 0.3 * keyword (+0.1 for a matching decision); rows without a
usable embedding (not yet embedded, or embedded by another model) score on keywords
alone and need 0.25 instead of 0.20. Results are picked by MMR (lambda 0.7) and a row
whose raw cosine to a picked one exceeds 0.92 is a near-duplicate and skipped.

Upkeep: long texts are split into 2,000-character chunks overlapping by 200; each
category has a time to live, renewed when a row is used; at most 5,000 rows (the least
used go first); VACUUM when a fifth of the file is free, at most daily. Embedding runs on
one background thread, never on the caller's event loop.
"""

from __future__ import annotations

import concurrent.futures
import math
import re
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from ..render.redaction import logger
from ..store.db import Database
# ANCHORS is imported for the readers of nbagent.memory.index.ANCHORS (the tests).
from .embeddings import ANCHORS, Calibration, Embedder, anchors_for, anchors_ready, redundancy_floor  # noqa: F401

log = logger("nbagent.memory")

CATEGORIES = ("fact", "decision", "preference", "snippet", "summary")
OLD_KINDS = {"gotcha": ("fact", "gotcha"), "command": ("snippet", "command")}
"""The first memory tool's kinds, still accepted: (category, tag)."""
TTL_DAYS = {"fact": 180, "decision": 180, "preference": 180, "summary": 90, "snippet": 14}
MAX_ROWS = 5_000
MAX_TEXT = 20_000
"""Characters one remember may store (split into chunks)."""
CHUNK, OVERLAP = 2_000, 200
W_COSINE, W_KEYWORD, DECISION_BOOST = 0.7, 0.3, 0.1
HYBRID_THRESHOLD, KEYWORD_THRESHOLD = 0.20, 0.25
MMR_LAMBDA, DUPLICATE_COSINE = 0.7, 0.92
VECTOR_CANDIDATES = 50
VACUUM_INTERVAL = 86_400.0
INJECT_K = 5
STOPWORDS = frozenset(
    "a an the and or of to in on at for by with from is are was were be been do does did how what which "
    "who whom why when where can could should would may might i we you it this that these those there "
    "our my your me us not no yes as into about any some if then than so".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class MemoryRow:
    id: int
    category: str
    text: str
    tags: str
    hits: int
    injected: int
    created: float
    used: float | None
    expires: float | None
    chunk_of: int | None
    embed_model: str | None
    kind: str = ""
    """What the prompt block shows (the first memory tool's kinds: gotcha, command); else the category."""
    source: str = "workspace"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ROW_COLUMNS = "id, category, text, tags, hits, injected, created, used, expires, chunk_of, embed_model, kind"
"""The columns of a MemoryRow, in its fields' order (``MemoryRow(*row, source=...)``)."""


@dataclass
class Hit:
    row: MemoryRow
    score: float
    cosine: float | None
    """Calibrated cosine (0 = unrelated); None when the row or the query has no usable embedding."""
    keyword: float
    why: str
    raw_cosine: float | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.row.id, "kind": self.row.category, "text": self.row.text, "category": self.row.category,
                "tags": self.row.tags,
                "source": self.row.source, "score": round(self.score, 3),
                "cosine": None if self.cosine is None else round(self.cosine, 3),
                "keyword": round(self.keyword, 3), "why": self.why}



def open_index(scope: str = "workspace", *, db: Database | None = None, workspace: Any = None,
               embedder: Embedder | None = None) -> "MemoryIndex":
    """The one builder of a memory index: the workspace's (on ``db``, else the database of ``workspace``)
    or the user's global one (``scope="global"``), searched with ``embedder`` (None: keywords only;
    nbagent.memory.embeddings.shared_embedder gives the configured one)."""
    from ..store.db import open_database

    if scope == "global":
        return MemoryIndex(db if db is not None else open_database(global_memory=True), embedder, source="global")
    if scope != "workspace":
        raise ValueError(f"a memory scope is workspace or global, not {scope!r}")
    return MemoryIndex(db if db is not None else open_database(workspace=workspace), embedder)


def chunks(text: str, size: int = CHUNK, overlap: int = OVERLAP) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, each repeating the last ``overlap`` of the one before."""
    if len(text) <= size:
        return [text]
    out, start = [], 0
    while start < len(text):
        out.append(text[start:start + size])
        if start + size >= len(text):
            break
        start += size - overlap
    return out


def query_terms(query: str) -> list[str]:
    """The query's distinct words, lower case, without stop words (all of them if only stop words)."""
    words = [w.lower() for w in _WORD.findall(query)]
    kept = [w for w in words if w not in STOPWORDS and len(w) > 1]
    return list(dict.fromkeys(kept or words))


def normalise_category(category: str | None, tags: Iterable[str] = ()) -> tuple[str, list[str]]:
    tags = [t.strip().lower() for t in tags if t and t.strip()]
    category = (category or "fact").strip().lower()
    if category in OLD_KINDS:
        category, tag = OLD_KINDS[category]
        tags = [tag, *tags]
    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {', '.join(CATEGORIES)}, not {category!r}")
    return category, list(dict.fromkeys(tags))


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


class MemoryIndex:
    """The memory rows of one database (the workspace's or the user's global one)."""

    def __init__(self, db: Database, embedder: Embedder | None = None, *, source: str = "workspace",
                 clock: Callable[[], float] = time.time):
        self.db = db
        self.embedder = embedder
        self.source = source
        self.clock = clock
        self.warnings: list[str] = []
        self._fts = self._has_fts()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._pending: concurrent.futures.Future | None = None
        self._lock = threading.Lock()
        self._matrix: tuple[tuple, np.ndarray, np.ndarray, dict[int, int]] | None = None
        self._anchors: np.ndarray | None = None
        self._warned_model = False

    # ----- writing ---------------------------------------------------------------------------
    def add(self, text: str, category: str | None = None, tags: Iterable[str] = (), *,
            kind: str | None = None) -> list[MemoryRow]:
        """Store ``text`` (chunked when long); ValueError when it is empty, too long or already stored.

        ``kind`` is what the prompt block shows (the first memory tool's kinds); it defaults to the category.
        """
        category, tag_list = normalise_category(category, tags)
        text = text.strip()
        if not text:
            raise ValueError("text is empty")
        if len(text) > MAX_TEXT:
            raise ValueError(f"text is {len(text)} characters; at most {MAX_TEXT} may be remembered at once")
        now = self.clock()
        expires = now + TTL_DAYS[category] * 86_400
        tag_text = " ".join(tag_list)
        ids: list[int] = []
        with self.db.write() as conn:
            pieces = chunks(text)
            if conn.execute("SELECT 1 FROM memory WHERE norm = ?", (_norm(pieces[0]),)).fetchone():
                raise ValueError("this is already remembered")
            for piece in pieces:
                cursor = conn.execute(
                    "INSERT INTO memory (kind, category, text, norm, tags, hits, created, expires, chunk_of) "
                    "VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?) ON CONFLICT (norm) DO NOTHING",
                    (kind or category, category, piece, _norm(piece), tag_text, now, expires, ids[0] if ids else None))
                if cursor.rowcount:
                    ids.append(int(cursor.lastrowid or 0))
            self._prune(conn, now)
        self.schedule_embedding()
        return self.rows_by_id(ids)

    def forget(self, text: str) -> list[MemoryRow]:
        """Remove every row containing ``text`` (any case), with the other chunks of its entry."""
        needle = text.strip().lower()
        if not needle:
            raise ValueError("give the text (or part of it) of the entry to forget")
        with self.db.read() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM memory WHERE instr(lower(text), ?) > 0", (needle,))]
        return self.forget_ids(ids)

    def forget_ids(self, ids: Iterable[int]) -> list[MemoryRow]:
        ids = [int(i) for i in ids]
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        with self.db.write() as conn:
            family = [r[0] for r in conn.execute(
                f"SELECT id FROM memory WHERE id IN ({marks}) OR chunk_of IN ({marks}) OR id IN "
                f"(SELECT chunk_of FROM memory WHERE id IN ({marks}))", ids * 3)]
            removed = self.rows_by_id(family)
            conn.execute(f"DELETE FROM memory WHERE id IN ({', '.join('?' * len(family))})", family)
        self._matrix = None
        return removed

    def prune(self) -> int:
        """Drop expired rows and rows over the cap; VACUUM when due. Returns rows removed."""
        with self.db.write() as conn:
            removed = self._prune(conn, self.clock())
        self._vacuum_if_due()
        return removed

    def _prune(self, conn: sqlite3.Connection, now: float) -> int:
        removed = conn.execute("DELETE FROM memory WHERE expires IS NOT NULL AND expires < ?", (now,)).rowcount
        over = conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0] - MAX_ROWS
        if over > 0:
            removed += conn.execute(
                "DELETE FROM memory WHERE id IN (SELECT id FROM memory "
                "ORDER BY hits + injected, MAX(created, COALESCE(used, 0)) LIMIT ?)", (over,)).rowcount
        if removed:
            self._matrix = None
        return removed

    def _vacuum_if_due(self) -> bool:
        last = float(self._meta("last_vacuum") or 0)
        if self.clock() - last < VACUUM_INTERVAL:
            return False
        with self.db.read() as conn:
            free, pages = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("freelist_count", "page_count"))
            if pages and free / pages >= 0.2:
                conn.execute("VACUUM")  # needs no open transaction: the connection runs in autocommit
        self._set_meta("last_vacuum", str(self.clock()))
        return True

    def touch(self, ids: Iterable[int], *, injected: bool) -> None:
        """Count a use (an injection or a recall) and renew the rows' time to live."""
        ids = list(ids)
        if not ids:
            return
        now = self.clock()
        column = "injected" if injected else "hits"
        with self.db.write() as conn:
            conn.executemany(
                f"UPDATE memory SET {column} = {column} + 1, used = ?, "
                "expires = ? + (CASE category WHEN 'snippet' THEN ? WHEN 'summary' THEN ? ELSE ? END) * 86400 "
                "WHERE id = ?",
                [(now, now, TTL_DAYS["snippet"], TTL_DAYS["summary"], TTL_DAYS["fact"], i) for i in ids])

    # ----- embeddings ------------------------------------------------------------------------
    def _pool(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nbagent-embed")
            return self._executor

    def schedule_embedding(self) -> concurrent.futures.Future | None:
        """Embed the rows that have no embedding yet, on the background thread."""
        if self.embedder is None:
            return None
        with self._lock:
            if self._pending is not None and not self._pending.done():
                return self._pending
        future = self._pool().submit(self._embed_guarded)
        self._pending = future
        return future

    def _embed_guarded(self) -> int:
        try:
            return self.embed_pending()
        except sqlite3.ProgrammingError as exc:
            # The database was closed under the background embedding (the agent moved to another session
            # or closed): nothing is lost, the rows are embedded the next time the database is opened.
            log.debug("memory embedding stopped, its database was closed: %s", exc)
            return 0
        except Exception as exc:  # an endpoint down: the rows stay keyword-only and are retried later
            log.warning("memory embedding failed, rows stay keyword-only for now: %s", exc)
            return 0

    def embed_pending(self, batch: int = 32, *, everything: bool = False) -> int:
        """Embed rows without an embedding (all rows when ``everything``); returns how many."""
        if self.embedder is None:
            return 0
        where = "" if everything else "WHERE embedding IS NULL"
        done = 0
        last = 0
        while True:
            with self.db.read() as conn:
                rows = conn.execute(f"SELECT id, text FROM memory {where} {'AND' if where else 'WHERE'} id > ? "
                                    "ORDER BY id LIMIT ?", (last, batch)).fetchall()
            if not rows:
                return done
            vectors = self.embedder.embed([t for _, t in rows], query=False)
            model, dim = self.embedder.model, int(vectors.shape[1])
            with self.db.write() as conn:
                conn.executemany("UPDATE memory SET embedding = ?, embed_model = ?, embed_dim = ? WHERE id = ?",
                                 [(v.astype(np.float32).tobytes(), model, dim, i) for (i, _), v in zip(rows, vectors)])
            self._matrix = None
            done += len(rows)
            last = rows[-1][0]

    def reindex(self) -> int:
        """Re-embed every row with the current embedder (after a model change)."""
        if self.embedder is None:
            raise ValueError("no embedder is configured: memory is keyword-only, there is nothing to reindex")
        count = self.embed_pending(everything=True)
        self._warned_model = False
        return count

    def embed_query(self, text: str) -> concurrent.futures.Future | None:
        """The query's vector, computed on the background thread (None without an embedder)."""
        if self.embedder is None:
            return None
        embedder = self.embedder

        def embed():
            self.anchors()  # the calibration needs them; computed here, off the caller's loop
            return embedder.embed([text], query=True)[0]

        return self._pool().submit(embed)

    def anchors(self) -> np.ndarray | None:
        """The anchor sentences' embeddings (computed once, on the calling thread: call it off the loop)."""
        if self.embedder is None:
            return None
        if self._anchors is None:
            self._anchors = anchors_for(self.embedder)
        return self._anchors

    @property
    def ready(self) -> bool:
        """The embedder is loaded and calibrated: a query vector takes milliseconds, worth a short wait."""
        return anchors_ready(self.embedder)

    def warm(self) -> concurrent.futures.Future | None:
        """Load the embedder (its anchors) on a daemon thread, then embed the rows a previous agent left
        without a vector (one closed at once after remembering). The future gives how many rows were
        embedded; None without an embedder. A daemon thread: a short script never waits at exit for a
        model it did not need."""
        if self.embedder is None:
            return None
        done: concurrent.futures.Future = concurrent.futures.Future()

        def warm() -> None:
            try:
                self.anchors()
            except Exception as exc:  # an endpoint down: keywords until next time
                log.warning("loading the memory embedder failed: %s", exc)
                done.set_result(0)
                return
            try:
                pending = self.schedule_embedding()
            except RuntimeError:  # the interpreter is exiting: the next agent embeds what is left
                done.set_result(0)
                return
            done.set_result(pending.result() if pending is not None else 0)

        threading.Thread(target=warm, name="nbagent-embed-warmup", daemon=True).start()
        return done

    def _vectors(self) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
        """(ids, matrix, id -> row) of rows embedded by the current model; reloaded when the table changed."""
        assert self.embedder is not None
        with self.db.read() as conn:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            cached = self._matrix
            if cached is not None and cached[0][0] == version:
                return cached[1], cached[2], cached[3]
            sig = conn.execute("SELECT COUNT(*), COALESCE(MAX(id), 0), COUNT(embedding) FROM memory").fetchone()
            if cached is not None and cached[0][1:] == tuple(sig):
                self._matrix = ((version, *sig), cached[1], cached[2], cached[3])
                return cached[1], cached[2], cached[3]
            rows = conn.execute("SELECT id, embedding, embed_model, embed_dim FROM memory "
                                "WHERE embedding IS NOT NULL").fetchall()
        model = self.embedder.model
        usable = [(i, blob) for i, blob, m, d in rows if m == model]
        stale = len(rows) - len(usable)
        if stale and not self._warned_model:
            self._warned_model = True
            message = (f"{stale} memory entries were embedded by another model or dimension; they are "
                       f"searched by keywords only until `nbagent memory reindex` re-embeds them with {model}")
            self.warnings.append(message)
            log.warning("%s", message)
        dims = {len(blob) // 4 for _, blob in usable}
        if len(dims) > 1:  # the same model name with a changed dimension: keep the current one
            dim = self.embedder.dim
            usable = [(i, b) for i, b in usable if len(b) // 4 == dim]
        ids = np.array([i for i, _ in usable], dtype=np.int64)
        matrix = (np.frombuffer(b"".join(b for _, b in usable), dtype=np.float32).reshape(len(usable), -1)
                  if usable else np.zeros((0, 1), dtype=np.float32))
        position = {int(i): n for n, i in enumerate(ids)}
        self._matrix = ((version, *sig), ids, matrix, position)
        return ids, matrix, position

    # ----- reading ---------------------------------------------------------------------------
    def rows_by_id(self, ids: Iterable[int]) -> list[MemoryRow]:
        ids = list(ids)
        if not ids:
            return []
        with self.db.read() as conn:
            rows = conn.execute(f"SELECT {ROW_COLUMNS} FROM memory WHERE id IN ({', '.join('?' * len(ids))})",
                                ids).fetchall()
        by_id = {r[0]: MemoryRow(*r, source=self.source) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def rows(self, limit: int | None = None, category: str | None = None) -> list[MemoryRow]:
        where, args = ("WHERE category = ?", [category]) if category else ("", [])
        query = f"SELECT {ROW_COLUMNS} FROM memory {where} ORDER BY id DESC" + (" LIMIT ?" if limit else "")
        with self.db.read() as conn:
            rows = conn.execute(query, [*args, *([limit] if limit else [])]).fetchall()
        return [MemoryRow(*r, source=self.source) for r in rows]

    def keyword_scores(self, query: str) -> dict[int, float]:
        """Row id -> IDF-weighted share of the query's terms found in the row (0..1)."""
        terms = query_terms(query)
        if not terms:
            return {}
        with self.db.read() as conn:
            total = conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0] or 1
            matches = [self._matching(conn, term) for term in terms]
        # BM25's idf: a term found in every row weighs almost nothing.
        weights = [math.log(1 + (total - len(ids) + 0.5) / (len(ids) + 0.5)) for ids in matches]
        whole = sum(weights) or 1.0
        scores: dict[int, float] = {}
        for ids, weight in zip(matches, weights):
            for i in ids:
                scores[i] = scores.get(i, 0.0) + weight / whole
        return scores

    def _matching(self, conn: sqlite3.Connection, term: str) -> set[int]:
        if self._fts:
            try:
                quoted = '"' + term.replace('"', '""') + '"'
                return {r[0] for r in conn.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?",
                                                    (quoted,))}
            except sqlite3.OperationalError as exc:  # a MATCH the tokenizer cannot take: fall back
                log.debug("FTS5 MATCH failed for %r, using LIKE: %s", term, exc)
        # instr() on lower(): LIKE would read % and _ in the term as wildcards.
        return {r[0] for r in conn.execute(
            "SELECT id FROM memory WHERE instr(lower(text || ' ' || tags), ?) > 0", (term.lower(),))}

    def _has_fts(self) -> bool:
        with self.db.read() as conn:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_fts'").fetchone()
        return bool(found)

    def search(self, query: str, k: int = INJECT_K, *, query_vector: np.ndarray | None = None,
               mode: str = "hybrid", threshold: bool = True) -> list[Hit]:
        """The ``k`` best rows for ``query``. ``mode``: "hybrid", "keyword" or "cosine" (for comparisons).

        Without ``query_vector`` (none given, no embedder) the search is keyword-only.
        """
        keyword = self.keyword_scores(query) if mode != "cosine" else {}
        cosines: dict[int, tuple[float, float]] = {}
        matrix = position = None
        anchors = self.anchors() if query_vector is not None and mode != "keyword" else None
        if query_vector is not None and anchors is not None:
            ids, matrix, position = self._vectors()
            if len(ids) and anchors is not None:  # an embedder gives anchors
                raw = matrix @ query_vector
                calibrated = Calibration.for_query(query_vector, anchors)(raw)
                top = np.argsort(-raw)[:VECTOR_CANDIDATES]
                cosines = {int(ids[n]): (float(calibrated[n]), float(raw[n])) for n in top}
                for i in keyword:
                    if i in position and i not in cosines:
                        n = position[i]
                        cosines[i] = (float(calibrated[n]), float(raw[n]))
        candidates = set(keyword) | set(cosines)
        if not candidates:
            return []
        rows = {r.id: r for r in self.rows_by_id(candidates)}
        hits = [self._score(rows[i], keyword.get(i, 0.0), cosines.get(i), mode, query_vector is not None)
                for i in candidates if i in rows]
        if threshold:
            hits = [h for h in hits if h.score >= (HYBRID_THRESHOLD if h.cosine is not None else KEYWORD_THRESHOLD)]
        return self._mmr(hits, k, matrix, position)

    def _score(self, row: MemoryRow, keyword: float, cosine: tuple[float, float] | None, mode: str,
               have_query_vector: bool) -> Hit:
        if mode == "keyword" or cosine is None:
            score, why = keyword, f"keywords {keyword:.2f}" + ("" if have_query_vector or mode == "keyword"
                                                             else " (no embedding yet)")
            calibrated = raw = None
        elif mode == "cosine":
            calibrated, raw = cosine
            score, why = calibrated, f"cosine {calibrated:.2f}"
        else:
            calibrated, raw = cosine
            score = W_COSINE * calibrated + W_KEYWORD * keyword
            why = f"cosine {calibrated:.2f} (raw {raw:.2f}) + keywords {keyword:.2f}"
        if row.category == "decision" and mode == "hybrid" and (keyword > 0 or (calibrated or 0) > 0):
            score += DECISION_BOOST
            why += " + decision 0.10"
        return Hit(row, score, calibrated, keyword, why, raw)

    def _mmr(self, hits: list[Hit], k: int, matrix, position) -> list[Hit]:
        """Maximal marginal relevance; near-duplicates of a chosen row are dropped."""
        anchors = self._anchors
        floor = redundancy_floor(anchors) if anchors is not None else 0.0
        chosen: list[Hit] = []
        pool = sorted(hits, key=lambda h: -h.score)
        seen_text: set[str] = set()
        while pool and len(chosen) < k:
            best, best_value = None, -math.inf
            for hit in pool:
                similarity = self._max_similarity(hit, chosen, matrix, position)
                redundancy = max(0.0, (similarity - floor) / max(1 - floor, 1e-3)) if similarity is not None else 0.0
                value = MMR_LAMBDA * hit.score - (1 - MMR_LAMBDA) * redundancy
                if value > best_value:
                    best, best_value = hit, value
            assert best is not None
            pool.remove(best)
            similarity = self._max_similarity(best, chosen, matrix, position)
            norm = _norm(best.row.text)
            if (similarity is not None and similarity > DUPLICATE_COSINE) or norm in seen_text:
                continue  # a near-duplicate of what is already chosen
            seen_text.add(norm)
            chosen.append(best)
        return chosen

    @staticmethod
    def _max_similarity(hit: Hit, chosen: list[Hit], matrix, position) -> float | None:
        if matrix is None or position is None or hit.row.id not in position:
            return None
        mine = matrix[position[hit.row.id]]
        sims = [float(matrix[position[c.row.id]] @ mine) for c in chosen if c.row.id in position]
        return max(sims) if sims else None

    # ----- counters and status ---------------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        with self.db.read() as conn:
            row = conn.execute("SELECT value FROM memory_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        with self.db.write() as conn:
            conn.execute("INSERT INTO memory_meta (key, value) VALUES (?, ?) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def count_search(self, injected: bool) -> None:
        """Counts searches and those that injected something (the status' hit rate)."""
        with self.db.write() as conn:
            for key in ("searches", *(["searches_injecting"] if injected else [])):
                conn.execute("INSERT INTO memory_meta (key, value) VALUES (?, '1') ON CONFLICT (key) "
                             "DO UPDATE SET value = CAST(value AS INTEGER) + 1", (key,))

    def status(self) -> dict[str, Any]:
        with self.db.read() as conn:
            rows = conn.execute("SELECT COUNT(*), COUNT(embedding), COALESCE(SUM(injected), 0) FROM memory").fetchone()
            models = conn.execute("SELECT COALESCE(embed_model, '(none)'), embed_dim, COUNT(*) FROM memory "
                                  "GROUP BY embed_model, embed_dim ORDER BY 3 DESC").fetchall()
            categories = dict(conn.execute("SELECT category, COUNT(*) FROM memory GROUP BY category").fetchall())
        searches = int(self._meta("searches") or 0)
        injecting = int(self._meta("searches_injecting") or 0)
        path = self.db.path
        sizes = {suffix or "db": _size(str(path) + suffix) for suffix in ("", "-wal", "-shm")}
        return {
            "source": self.source, "path": str(path), "rows": rows[0], "embedded": rows[1],
            "injections": rows[2], "categories": categories,
            "models": [{"model": m, "dim": d, "rows": n} for m, d, n in models],
            "current_model": getattr(self.embedder, "model", None), "fts5": self._fts,
            "searches": searches, "hit_rate": round(injecting / searches, 3) if searches else None,
            "db_bytes": sizes["db"], "wal_bytes": sizes["-wal"], "shm_bytes": sizes["-shm"],
        }

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)
                self._executor = None


def _size(path: str) -> int:
    import os

    try:
        return os.path.getsize(path)
    except OSError:
        return 0
