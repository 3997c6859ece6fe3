"""Project memory: short durable notes about the workspace, kept across sessions in its database.

Entries are facts, decisions, preferences, snippets and summaries (and the first
kinds, gotchas and commands) the model chose to remember. Writes, chunking, expiry
and search go through nbagent.memory.index; this class is the fast path:
``recall`` raises an entry's hit count; the most used and most recent entries
go into the system prompt, under a line that tells the model memory can be
stale. ``compact`` lets the model rewrite the entries nobody recalled yet.
Nothing here emits events: the tools do (through ``ctx.emit``), and
``compact`` takes an ``emit`` for the caller's sink.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Callable

from .. import events as ev
from .index import CATEGORIES, MAX_ROWS, ROW_COLUMNS, MemoryIndex, MemoryRow, normalise_category, open_index
from ..render.escape import truncate
from ..store.db import Database

KINDS = (*CATEGORIES, "gotcha", "command")
MAX_TEXT = 400
"""Characters of one entry shown in the prompt block (longer entries are searched, not listed)."""
MAX_ENTRIES = MAX_ROWS
PROMPT_ENTRIES = 20
HEADER = ("What you learned about this project in earlier sessions. Trust it, but verify anything that "
          "contradicts the code you see now:")
_FIRST_CHUNKS = "chunk_of IS NULL"
# Most used first, then the most recently used or added.
_ORDER = "ORDER BY hits DESC, MAX(created, COALESCE(used, 0)) DESC, id DESC"


@dataclass
class CompactResult:
    changed: bool
    before: int
    after: int
    message: str


def _norm(text: str) -> str:
    """Two notes are duplicates when they differ only in case and spacing."""
    return " ".join(text.lower().split())


def check_entry(kind: str, text: str, max_text: int = MAX_TEXT) -> str:
    """The cleaned text of a valid entry; ValueError says what is wrong."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    text = " ".join(text.split())
    if not text:
        raise ValueError("text is empty")
    if len(text) > max_text:
        raise ValueError(f"text is {len(text)} characters; keep it to {MAX_TEXT} (one self-contained line)")
    return text


class ProjectMemory:
    def __init__(self, db: Database, index: MemoryIndex | None = None):
        self.db = db
        self.index = index if index is not None else open_index(db=db)

    def entries(self, limit: int | None = None) -> list[MemoryRow]:
        """Entries (the first chunk of a long one), most used first."""
        query = f"SELECT {ROW_COLUMNS} FROM memory WHERE {_FIRST_CHUNKS} {_ORDER}" + (" LIMIT ?" if limit else "")
        with self.db.read() as conn:
            rows = conn.execute(query, (limit,) if limit else ()).fetchall()
        return [MemoryRow(*row) for row in rows]

    def top(self, n: int = PROMPT_ENTRIES) -> list[MemoryRow]:
        return self.entries(limit=n)

    def render_memory(self, n: int = PROMPT_ENTRIES) -> str:
        """The block for the system prompt; empty when there is nothing to say."""
        entries = self.top(n)
        if not entries:
            return ""
        return "\n".join([HEADER, *(f"- ({e.kind}) {truncate(e.text, MAX_TEXT)}" for e in entries)])

    def remember(self, kind: str, text: str, tags: tuple[str, ...] | list[str] = ()) -> MemoryRow:
        """Store a note (chunked past 2,000 characters); the least used rows go past the row cap."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        return self.index.add(text, category=kind, tags=tags, kind=kind)[0]

    def recall(self, query: str) -> list[MemoryRow]:
        """Entries containing every term of ``query`` (any case); each match counts as a hit."""
        terms = query.lower().split()
        if not terms:
            raise ValueError("the query is empty: give one or more words that must all appear")
        # instr() on lower(): LIKE would treat % and _ in a term as wildcards.
        where = " AND ".join("instr(lower(kind || ' ' || text), ?) > 0" for _ in terms)
        now = time.time()
        with self.db.write() as conn:
            ids = [r[0] for r in conn.execute(f"SELECT id FROM memory WHERE {where}", terms)]
            conn.executemany("UPDATE memory SET hits = hits + 1, used = ? WHERE id = ?", [(now, i) for i in ids])
            rows = conn.execute(
                f"SELECT {ROW_COLUMNS} FROM memory WHERE id IN ({', '.join('?' * len(ids))}) {_ORDER}", ids
            ).fetchall()
        return [MemoryRow(*row) for row in rows]

    def forget(self, text: str) -> list[MemoryRow]:
        """Remove every entry containing ``text`` (any case), all its chunks; returns what was removed."""
        return self.index.forget(text)

    def compact(self, summarize: Callable[[str], str],
                emit: Callable[[ev.AnyEvent], None] | None = None) -> CompactResult:
        """Let the model merge and prune the entries never recalled; recalled ones stay verbatim.

        ``summarize(prompt) -> answer`` is one model call. An answer that is not a JSON list
        of valid entries leaves the store exactly as it was.
        """
        entries = self.entries()
        # Long entries and summaries are searched, not rewritten into one-liners.
        candidates = [e for e in entries if e.hits == 0 and len(e.text) <= MAX_TEXT and e.kind != "summary"]
        kept = [e for e in entries if e not in candidates]
        if not candidates:
            return CompactResult(False, len(entries), len(entries), "nothing to compact")
        rewritten = parse_compaction(summarize(compaction_prompt(candidates, kept)))
        if rewritten is None:
            return CompactResult(False, len(entries), len(entries),
                                 "the answer could not be parsed; memory was left untouched")
        after = self._replace(candidates, rewritten)
        if emit is not None:
            emit(ev.MemoryChanged(action="compact", entries=[e.to_dict() for e in after]))
        return CompactResult(True, len(entries), len(after), f"{len(entries)} entries compacted to {len(after)}")

    def _replace(self, old: list[MemoryRow], new: list[tuple[str, str]]) -> list[MemoryRow]:
        now = time.time()
        with self.db.write() as conn:
            # Delete by id: an entry another kernel added meanwhile is not ours to drop.
            conn.executemany("DELETE FROM memory WHERE id = ? AND hits = 0", [(e.id,) for e in old])
            room = MAX_ENTRIES - conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0]
            for kind, text in new[: max(room, 0)]:
                category, tags = normalise_category(kind)
                conn.execute(
                    "INSERT INTO memory (kind, category, tags, text, norm, hits, created, expires) "
                    "VALUES (?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (norm) DO NOTHING",
                    (kind, category, " ".join(tags), text, _norm(text), now, now + ttl_seconds(category)),
                )
        self.index.schedule_embedding()
        return self.entries()


def project_memory(db: Database, config: Any) -> ProjectMemory:
    """The one wiring of project memory: its entries and its index on ``db``, with the configured embedder."""
    from .embeddings import shared_embedder

    return ProjectMemory(db, open_index(db=db, embedder=shared_embedder(config)))


def ttl_seconds(category: str) -> float:
    from .index import TTL_DAYS

    return TTL_DAYS[category] * 86_400


def compaction_prompt(candidates: list[MemoryRow], kept: list[MemoryRow]) -> str:
    listing = json.dumps([{"kind": e.kind, "text": e.text} for e in candidates], ensure_ascii=False, indent=0)
    kept_lines = "\n".join(f"- ({e.kind}) {e.text}" for e in kept) or "(none)"
    return (
        "Rewrite this project's memory entries. Merge entries that say the same thing, drop entries that "
        "are trivial or obsolete, keep every entry one self-contained line of at most "
        f"{MAX_TEXT} characters. Kinds: {', '.join(KINDS)}.\n\n"
        f"These entries are kept as they are; do not repeat them:\n{kept_lines}\n\n"
        f"Entries to rewrite:\n{listing}\n\n"
        'Answer with a JSON array only, like [{"kind": "fact", "text": "..."}].'
    )


def parse_compaction(answer: str) -> list[tuple[str, str]] | None:
    """The (kind, text) pairs of a rewrite, or None when any part of the answer is invalid."""
    match = re.search(r"\[.*\]", answer or "", re.S)
    if not match:
        return None
    try:
        items = json.loads(match.group(0))
        pairs = [(item["kind"], check_entry(item["kind"], item["text"])) for item in items]
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    # An empty rewrite of a non-empty store is far likelier a failure than a wish to forget everything.
    if not pairs:
        return None
    unique = {_norm(text): (kind, text) for kind, text in pairs}
    return list(unique.values())
