"""Retrieval check on a labelled set of our own: hybrid recall@5 beats keyword-only and cosine-only.

The figures are printed (run with -s to see them); bench/memory.py prints them too.
"""

from __future__ import annotations

import pytest

from nbagent.memory.index import MemoryIndex

from .retrieval_set import ENTRIES, QUERIES, UNRELATED


@pytest.fixture(scope="module")
def labelled(tmp_path_factory, e5):
    from nbagent.store.db import Database

    db = Database(tmp_path_factory.mktemp("retrieval") / "nbagent.db")
    index = MemoryIndex(db, e5)
    keys = {index.add(text, category)[0].id: key for key, (category, text) in ENTRIES.items()}
    index.schedule_embedding().result()
    vectors = dict(zip([q for q, _ in QUERIES] + UNRELATED,
                       e5.embed([q for q, _ in QUERIES] + UNRELATED, query=True)))
    yield index, keys, vectors
    index.close()
    db.close()


def recall_at_5(index, keys, vectors, mode: str) -> float:
    found = 0
    for query, answers in QUERIES:
        hits = index.search(query, 5, query_vector=vectors[query], mode=mode, threshold=False)
        found += any(keys[h.row.id] in answers for h in hits)
    return found / len(QUERIES)


def test_the_set_is_big_enough():
    assert len(ENTRIES) >= 50 and len(QUERIES) >= 30


def test_hybrid_recall_at_5_beats_keyword_only_and_cosine_only(labelled):
    index, keys, vectors = labelled
    recall = {mode: recall_at_5(index, keys, vectors, mode) for mode in ("keyword", "cosine", "hybrid")}
    print("\nrecall@5 on", len(QUERIES), "queries over", len(ENTRIES), "entries:",
          ", ".join(f"{mode} {value:.3f}" for mode, value in recall.items()))
    assert recall["hybrid"] > recall["keyword"]
    assert recall["hybrid"] > recall["cosine"]


def test_unrelated_queries_inject_nothing(labelled):
    index, keys, vectors = labelled
    for query in UNRELATED:
        assert index.search(query, 5, query_vector=vectors[query]) == [], query
