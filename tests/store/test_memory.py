"""Project memory: remember, recall, forget, the prompt block, compaction, events, the off switch."""

from __future__ import annotations

import json

import pytest

from nbagent.errors import ToolError
from nbagent.events import MemoryChanged
from nbagent.memory import index as index_module
from nbagent.memory.entries import HEADER, MAX_ENTRIES, ProjectMemory
from nbagent.store.sessions import SessionStore
from nbagent.tools.memory import MEMORY

from .tooling import call, make_context

REMEMBER, RECALL, FORGET = MEMORY.tools


@pytest.fixture
def memory(store):
    return ProjectMemory(store.db)


def test_remember_checks_kind_duplicates_and_prunes_past_the_cap(memory, store, monkeypatch):
    memory.remember("command", "Tests run with `pytest -q`, not `python -m unittest`.")
    with pytest.raises(ValueError, match="already remembered"):
        memory.remember("fact", "tests run with `pytest  -q`, NOT `python -m unittest`.")
    with pytest.raises(ValueError, match="kind must be one of"):
        memory.remember("opinion", "x")
    long = memory.remember("snippet", "y" * 4_500)  # stored in chunks; the prompt block shows 400 characters
    assert [len(e.text) for e in memory.entries() if e.id == long.id] == [2_000]
    assert "- (snippet) " + "y" * 399 + "…" in memory.render_memory()
    monkeypatch.setattr(index_module, "MAX_ROWS", 6)  # 1 + 3 chunks + 2 more: the least used go first
    memory.recall("pytest")
    memory.remember("fact", "entry one")
    memory.remember("fact", "entry two")
    memory.remember("fact", "entry three")
    assert MAX_ENTRIES == 5_000
    assert "Tests run with `pytest -q`, not `python -m unittest`." in [e.text for e in memory.entries()]
    assert len(memory.index.rows()) == 6


def test_recall_needs_every_term_and_counts_hits(memory):
    memory.remember("gotcha", "The migration must run before the seed or the FK fails.")
    memory.remember("fact", "The API is versioned under /v2.")
    assert [e.text for e in memory.recall("MIGRATION seed")] == [
        "The migration must run before the seed or the FK fails."]
    assert memory.recall("migration api") == []
    assert memory.recall("gotcha")[0].hits == 2  # the kind counts as a term too
    with pytest.raises(ValueError, match="empty"):
        memory.recall("   ")


def test_prompt_block_is_the_top_twenty_by_hits_then_recency(memory):
    for n in range(25):
        memory.remember("fact", f"note number {n}")
    memory.recall("number 3")  # 3 and 13 and 23
    block = memory.render_memory().splitlines()
    assert block[0] == HEADER and "verify anything that contradicts" in block[0]
    assert len(block) == 21
    assert block[1:4] == ["- (fact) note number 23", "- (fact) note number 13", "- (fact) note number 3"]
    assert block[4] == "- (fact) note number 24"


def test_forget_removes_entries_containing_the_text(memory):
    memory.remember("fact", "Uses Postgres 15")
    memory.remember("fact", "Postgres runs on port 5433")
    memory.remember("fact", "Redis is optional")
    assert len(memory.forget("postgres")) == 2
    assert [e.text for e in memory.entries()] == ["Redis is optional"]
    with pytest.raises(ValueError):
        memory.forget(" ")


def test_compaction_rewrites_unrecalled_entries_and_keeps_recalled_verbatim(memory):
    memory.remember("fact", "The API is versioned under /v2")
    memory.remember("fact", "API version is v2, under /v2")
    memory.remember("command", "Run tests with pytest -q")
    memory.recall("pytest")
    prompts = []

    def summarize(prompt: str) -> str:
        prompts.append(prompt)
        return 'Here you go:\n```json\n[{"kind": "fact", "text": "The API lives under /v2"}]\n```'

    events = []
    result = memory.compact(summarize, emit=events.append)
    assert result.changed and (result.before, result.after) == (3, 2)
    assert sorted((e.kind, e.text, e.hits) for e in memory.entries()) == [
        ("command", "Run tests with pytest -q", 1), ("fact", "The API lives under /v2", 0)]
    assert "Run tests with pytest -q" in prompts[0] and "do not repeat" in prompts[0]
    assert isinstance(events[0], MemoryChanged) and events[0].action == "compact"


@pytest.mark.parametrize("answer", ["", "I merged them all.", "[]", '[{"kind": "rumour", "text": "x"}]',
                                    '[{"kind": "fact"}]', '[{"kind": "fact", "text": "ok"}, "junk"]',
                                    json.dumps([{"kind": "fact", "text": "z" * 500}])])
def test_an_unparseable_compaction_leaves_the_store_untouched(memory, answer):
    memory.remember("fact", "one")
    memory.remember("fact", "two")
    before = memory.entries()
    result = memory.compact(lambda prompt: answer)
    assert not result.changed and "untouched" in result.message
    assert memory.entries() == before


def test_memory_tools_emit_and_persist_across_sessions(workspace):
    ctx = make_context(workspace)
    assert "Remembered (decision)" in call(ctx, REMEMBER, kind="decision", text="snake_case DB columns")
    with pytest.raises(ToolError, match="already remembered"):
        call(ctx, REMEMBER, kind="fact", text="Snake_case  DB columns")
    assert call(ctx, RECALL, query="columns") == "- (decision) snake_case DB columns"
    assert "No memory entry" in call(ctx, RECALL, query="nothing here")
    ctx.state.close()

    later = make_context(workspace, session="new")  # another session, same project
    assert "snake_case DB columns" in later.state.memory_block()
    assert "Forgot" in call(later, FORGET, text="SNAKE")
    actions = [e.action for e in ctx.extras["events"] + later.extras["events"]]
    assert actions == ["remember", "recall", "forget"]
    assert later.state.memory.entries() == []


def test_memory_off_neither_loads_nor_writes(workspace):
    with SessionStore(workspace) as store:
        ProjectMemory(store.db).remember("fact", "known before")
    ctx = make_context(workspace, memory=False)
    assert ctx.state.memory is None and ctx.state.memory_block() == ""
    with pytest.raises(ToolError, match="switched off"):
        call(ctx, REMEMBER, kind="fact", text="should not be written")
    with SessionStore(workspace) as store:
        assert [e.text for e in ProjectMemory(store.db).entries()] == ["known before"]


def test_memory_tool_approval_and_read_only_flags():
    # Writing memory steers later sessions: it asks like any change (tests/security/test_memory_approval.py).
    assert (REMEMBER.approval, RECALL.approval, FORGET.approval) == ("ask", "never", "ask")
    assert RECALL.read_only and not REMEMBER.read_only
