"""Automatic pruning on the wire, and /compact's model-written summary."""

from __future__ import annotations

import pytest
from nbagent import events as ev
from nbagent.testing.replies import Call, Fail, Reply
from nbagent.testing.scripted import ScriptedModel

pytestmark = pytest.mark.process


def test_automatic_pruning_shrinks_the_wire_not_the_history(make_agent, tmp_path):
    (tmp_path / "big.txt").write_text("line of text\n" * 600)  # ~8,000 characters a read
    reads = [Reply(tool_calls=[Call("read_file", {"path": "big.txt"})]) for _ in range(12)]
    model = ScriptedModel([*reads, "done"])
    agent = make_agent(model=model, compact_threshold=6000)
    result = agent.run("read it many times")
    compacted = [e for e in result.events if isinstance(e, ev.Compacted)]
    assert compacted and "pruned to" in compacted[0].message
    last = model.requests[-1].messages
    assert len(last) < len(agent.session.messages)
    assert len(agent.session.messages) == 1 + 12 * 2 + 1  # the stored history is whole
    calls = {c["id"] for m in last for c in m.get("tool_calls") or ()}
    assert all(m["tool_call_id"] in calls for m in last if m["role"] == "tool")


def test_compact_replaces_the_transcript_with_a_summary(make_agent):
    model = ScriptedModel(["first answer", "Goal: x. Files touched: none. What remains: y.", "after"])
    agent = make_agent(model=model)
    agent.run("first question")
    stored = len(agent.session.messages)
    result = agent.compact()
    assert result.reason == "done" and "Goal: x" in result.text
    agent.run("next question")
    sent = model.requests[-1].messages
    assert sent[0]["content"].startswith("Summary of the conversation so far") and len(sent) == 2
    assert len(agent.session.messages) == stored + 3  # old messages stay stored


def test_a_failed_summary_changes_nothing(make_agent):
    model = ScriptedModel(["answer", Fail(500), "after"])
    agent = make_agent(model=model, max_retries=0)
    agent.run("q")
    before = list(agent.session.messages)
    result = agent.compact()
    assert result.reason == "error"
    assert agent.session.messages == before
    agent.run("again")
    assert model.requests[-1].messages[0] == {"role": "user", "content": "q"}


def test_pruning_keeps_its_cut_so_the_next_requests_extend_the_pruned_one(make_agent, tmp_path):
    """The provider's cache needs each request to start with the previous one: after pruning, the steps
    that still fit keep the same cut, and only an overflow cuts again (a Compacted event each time)."""
    (tmp_path / "big.txt").write_text("line of text\n" * 600)
    reads = [Reply(tool_calls=[Call("read_file", {"path": "big.txt", "limit": 150 + n})]) for n in range(14)]
    model = ScriptedModel([*reads, "done"])
    agent = make_agent(model=model, compact_threshold=6000)
    result = agent.run("read it many times")
    prunes = [e for e in result.events if isinstance(e, ev.Compacted)]
    requests = [r.messages for r in model.requests]
    extended = sum(after[:len(before)] == before for before, after in zip(requests, requests[1:]))
    assert prunes and extended == len(requests) - 1 - len(prunes), (len(prunes), extended, len(requests))
    assert len({r.system for r in model.requests}) == 1


def test_compact_sends_the_sessions_own_tools_and_system_prompt(make_agent):
    model = ScriptedModel(["first answer", "Goal: x.", "after"])
    agent = make_agent(model=model)
    agent.run("first question")
    agent.compact()
    turn, summary = model.requests[0], model.requests[1]
    assert summary.system == turn.system and summary.tools == turn.tools and summary.tool_choice == "none"
    assert summary.messages[:len(turn.messages)] == turn.messages  # the same prefix, the summary prompt after it
