"""Relevant memory for one turn: search the memory scopes, render the block, say what was injected.

The query is the user's prompt at a turn's start, and a todo when it comes in progress (see
nbagent.engine.request_context: what the history holds is not sent again). Its embedding is computed
on the memory's background thread. The embedder is loaded in the background when the agent starts
(and at ``%load_ext``); while it loads a step searches by keywords (the first token is never held up
by a model load); once it is loaded a step waits at most QUERY_WAIT for its query's vector, so even a
session's first question is found by meaning.
"""

from __future__ import annotations

import concurrent.futures
import os
from pathlib import Path
from typing import Any, Callable

import platformdirs

from ..render.escape import truncate
from ..render.redaction import logger
from .index import Hit, MemoryIndex

log = logger("nbagent.memory")

HEADER = ("Relevant memory (found by searching project memory for this request; it may be stale, so "
          "verify it against the code):")
QUERY_WAIT = 0.1
"""Seconds a step waits for its query's vector once the embedder is loaded (never while it loads)."""
ENTRY_CHARS = 600
BLOCK_CHARS = 3_000


def render(hits: list[Hit], *, show_source: bool) -> str:
    if not hits:
        return ""
    lines, used = [HEADER], len(HEADER)
    for hit in hits:
        text = truncate(hit.row.text, ENTRY_CHARS, one_line=True)
        label = hit.row.category + (f", {hit.row.source}" if show_source else "")
        line = f"- ({label}) {text}"
        if used + len(line) > BLOCK_CHARS:
            break
        lines.append(line)
        used += len(line)
    return "\n".join(lines)


class RelevantMemory:
    """Per-turn retrieval over one or more memory indexes (workspace, global)."""

    def __init__(self, indexes: Callable[[], list[MemoryIndex]], k: int = 5):
        self._indexes = indexes
        self.k = k
        self._vectors: dict[str, concurrent.futures.Future] = {}
        self._counted = False
        self.last_hits: list[Hit] = []

    def begin_turn(self, prompt: str) -> None:
        """Start embedding the prompt in the background; forget the last turn's queries."""
        self._vectors = {}
        self._counted = False
        self._start(prompt)

    def _start(self, query: str) -> None:
        indexes = self._indexes()
        if query in self._vectors or not indexes or indexes[0].embedder is None:
            return
        future = indexes[0].embed_query(query)
        if future is not None:
            self._vectors[query] = future

    def _ready_vector(self, query: str):
        future = self._vectors.get(query)
        if future is None:
            self._start(query)
            future = self._vectors.get(query)
            if future is None:
                return None
        if not future.done():
            indexes = self._indexes()
            if not (indexes and indexes[0].ready):
                return None  # the model is still loading: keywords now, meaning once it is there
            # Loaded, a query embeds in milliseconds: a short wait lets this step search by meaning.
            concurrent.futures.wait([future], timeout=QUERY_WAIT)
            if not future.done():
                return None
        try:
            return future.result()
        except Exception as exc:  # an endpoint down: keyword search this turn
            log.warning("embedding the memory query failed; searching by keywords: %s", exc)
            return None

    def search(self, query: str) -> list[Hit]:
        """The hits for ``query`` across the scopes, best first (MMR inside each scope)."""
        vector = self._ready_vector(query)
        hits: list[Hit] = []
        for index in self._indexes():
            same_model = vector is not None and index.embedder is not None
            try:
                hits += index.search(query, self.k, query_vector=vector if same_model else None)
            except Exception as exc:  # a broken store must not break the turn
                log.warning("memory search failed in %s: %s", index.source, exc)
        hits.sort(key=lambda h: -h.score)
        return hits[: self.k]

    def fresh(self, query: str, sent: set[tuple[str, int]]) -> tuple[str, list[Hit]]:
        """(the prompt block, its hits) for ``query``, leaving out the entries in ``sent``: what the
        history already holds is not sent again (it would only make the request longer)."""
        hits = [h for h in self.search(query) if (h.row.source, h.row.id) not in sent]
        if hits or not self._counted:
            self._record(hits)
        self.last_hits = hits
        scopes = {h.row.source for h in hits}
        return render(hits, show_source=len(self._indexes()) > 1 or scopes != {"workspace"}), hits

    def _record(self, hits: list[Hit]) -> None:
        by_index: dict[str, list[int]] = {}
        for hit in hits:
            by_index.setdefault(hit.row.source, []).append(hit.row.id)
        for index in self._indexes():
            try:
                index.touch(by_index.get(index.source, []), injected=True)  # no-op without hits
                if not self._counted:
                    index.count_search(injected=bool(by_index.get(index.source)))
            except Exception as exc:
                log.debug("could not count memory use: %s", exc)
        self._counted = True

    def event_entries(self, hits: list[Hit]) -> list[dict[str, Any]]:
        return [h.to_dict() for h in hits]
