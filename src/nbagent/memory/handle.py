"""MemoryHandle: project memory for people (DataFrames, status), behind ``agent.memory``, the CLI and the panel.

The model works with memory through its tools; people list, search, forget and
reindex it through this handle. Searching here embeds the query on the calling
thread (a person waits for the answer anyway); the agent's turns never do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from .index import Hit, MemoryIndex, MemoryRow, open_index

LIST_COLUMNS = ["id", "source", "category", "tags", "text", "hits", "injected", "created", "expires",
                "embed_model"]
SEARCH_COLUMNS = ["id", "source", "score", "cosine", "keyword", "why", "category", "tags", "text"]


class MemoryHandle:
    def __init__(self, indexes: list[MemoryIndex]):
        if not indexes:
            raise ValueError("project memory is switched off")
        self.indexes = indexes

    @classmethod
    def open(cls, workspace: str | Path = ".", *, scope: str | None = None, config: Any = None) -> "MemoryHandle":
        """The memory of ``workspace`` (and/or the user's global one), as the configuration sets it up."""
        from ..config import AgentConfig
        from .embeddings import shared_embedder

        config = config or AgentConfig.load(workspace=str(workspace))
        scope = scope or config.memory_scope
        embedder = shared_embedder(config)
        scopes = [s for s in ("workspace", "global") if scope in (s, "all")]
        return cls([open_index(s, workspace=config.workspace, embedder=embedder) for s in scopes])

    @property
    def workspace(self) -> MemoryIndex:
        """Where new entries go: the first scope (the workspace unless only the global one is open)."""
        return self.indexes[0]

    def list(self, category: str | None = None, limit: int | None = None):
        """Every entry (each chunk of a long one), newest first, as a DataFrame."""
        import pandas as pd

        rows = [r for index in self.indexes for r in index.rows(limit=limit, category=category)]
        frame = pd.DataFrame([_row_dict(r) for r in rows], columns=LIST_COLUMNS)
        for column in ("created", "expires"):
            frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
        return frame

    def search(self, query: str, k: int = 10, *, mode: str = "hybrid", threshold: bool = False):
        """The best entries for ``query`` with their score and why, as a DataFrame.

        ``threshold=True`` keeps only what a turn would inject; ``mode`` is hybrid, keyword or cosine.
        """
        import pandas as pd

        return pd.DataFrame([_hit_dict(h) for h in self.hits(query, k, mode=mode, threshold=threshold)],
                            columns=SEARCH_COLUMNS)

    def hits(self, query: str, k: int = 10, *, mode: str = "hybrid", threshold: bool = False) -> list[Hit]:
        if not query.strip():
            raise ValueError("the query is empty")
        found: list[Hit] = []
        vector = None
        for index in self.indexes:
            if vector is None and index.embedder is not None and mode != "keyword":
                index.anchors()
                vector = index.embedder.embed([query], query=True)[0]
            elif index.embedder is not None and mode != "keyword":
                index._anchors = self.indexes[0]._anchors
            found += index.search(query, k, query_vector=vector, mode=mode, threshold=threshold)
        return sorted(found, key=lambda h: -h.score)[:k]

    def remember(self, text: str, category: str | None = None, tags: Iterable[str] = ()) -> list[MemoryRow]:
        return self.workspace.add(text, category, tags)

    def forget(self, what: int | str):
        """Remove an entry by id (with its chunks), or every entry containing the text; returns them."""
        import pandas as pd

        removed: list[MemoryRow] = []
        for index in self.indexes:
            if isinstance(what, int) or (isinstance(what, str) and what.strip().isdigit()):
                removed += index.forget_ids([int(what)]) if index is self.workspace else []
            else:
                removed += index.forget(str(what))
        return pd.DataFrame([_row_dict(r) for r in removed], columns=LIST_COLUMNS)

    def status(self) -> dict[str, Any]:
        """Rows, database and WAL bytes, models and dimensions, hit rate; one dict per scope."""
        statuses = [index.status() for index in self.indexes]
        for index, status in zip(self.indexes, statuses):
            if index.warnings:
                status["warnings"] = list(index.warnings)
        return {"scopes": statuses}

    def reindex(self) -> int:
        return sum(index.reindex() for index in self.indexes)

    def prune(self) -> int:
        return sum(index.prune() for index in self.indexes)

    def close(self) -> None:
        for index in self.indexes:
            index.close()
            index.db.close()

    def __enter__(self) -> "MemoryHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _row_dict(row: MemoryRow) -> dict[str, Any]:
    data = row.to_dict()
    return {column: data.get(column) for column in LIST_COLUMNS}


def _hit_dict(hit: Hit) -> dict[str, Any]:
    data = hit.to_dict()
    return {column: data.get(column) for column in SEARCH_COLUMNS}
