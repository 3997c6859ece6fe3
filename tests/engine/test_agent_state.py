"""AgentState and reduce: the rules every front end renders by, and the recorded sequences shared with
the panel's TypeScript reducer."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from nbagent import events as ev
from nbagent.render.agent_state import AgentState, TextItem, ToolItem, reduce, turns_from_messages
from nbagent.testing import Call, Reply, Slow
from tests.paths import FIXTURES

SEQUENCES = sorted((FIXTURES / "event_sequences").glob("*.json"))


def replay(events, state=None):
    state = state or AgentState()
    for event in events:
        state = reduce(state, event)
    return state


@pytest.mark.parametrize("path", SEQUENCES, ids=lambda p: p.stem)
def test_recorded_sequences_reduce_to_their_expected_state(path):
    data = json.loads(path.read_text())
    state = replay(ev.event_from_dict(e) for e in data["events"])
    assert state.to_dict() == data["expected"]
    assert AgentState.from_dict(data["expected"]).to_dict() == data["expected"]


def test_there_are_recorded_sequences():
    assert {p.stem for p in SEQUENCES} >= {"text_and_tools", "approval_denied", "abort_with_queue",
                                           "aborted_mid_stream", "todos_and_settings"}


def test_reduce_leaves_the_old_state_as_it_was():
    before = replay([ev.TurnStart(prompt="hi", turn_id="t1"), ev.TextDelta(text="Hel", turn_id="t1")])
    after = reduce(before, ev.TextDelta(text="lo", turn_id="t1"))
    assert before.turn.items == (TextItem("Hel"),)
    assert after.turn.items == (TextItem("Hello"),)


def test_items_keep_the_order_things_happened_in():
    state = replay([
        ev.TurnStart(prompt="p", turn_id="t"),
        ev.TextDelta(text="Let me look.", turn_id="t"),
        ev.ToolInputStart(name="glob", call_id="c1", turn_id="t"),
        ev.ToolInputDelta(name="glob", call_id="c1", text='{"pattern"', turn_id="t"),
        ev.ToolCall(name="glob", call_id="c1", arguments={"pattern": "*"}, turn_id="t"),
        ev.ToolResult(name="glob", call_id="c1", output="a.py", turn_id="t"),
        ev.TextDelta(text="Done.", turn_id="t"),
        ev.TurnEnd(reason="done", text="Let me look.\n\nDone.", steps=2, turn_id="t"),
    ])
    assert state.turn is None and len(state.transcript) == 1
    kinds = [(type(i).__name__, getattr(i, "text", None) or getattr(i, "name", "")) for i in state.transcript[0].items]
    assert kinds == [("TextItem", "Let me look."), ("ToolItem", "glob"), ("TextItem", "Done.")]
    tool = state.transcript[0].items[1]
    assert tool.status == "done" and tool.arguments == {"pattern": "*"} and tool.input_text == '{"pattern"'


def test_a_dropped_queued_prompt_leaves_the_queue_on_its_turn_end():
    state = replay([
        ev.TurnStart(prompt="first", turn_id="t1"),
        ev.PromptQueued(prompt="second", position=1, turn_id="t2"),
        ev.PromptQueued(prompt="third", position=2, turn_id="t3"),
    ])
    assert [q.prompt for q in state.queue] == ["second", "third"] and state.busy
    state = replay([ev.TurnEnd(reason="aborted", turn_id="t2"), ev.TurnEnd(reason="aborted", turn_id="t3"),
                    ev.TurnEnd(reason="aborted", turn_id="t1")], state)
    assert state.queue == () and state.turn is None and not state.busy
    assert [t.prompt for t in state.transcript] == ["first"]  # dropped prompts never ran


def test_pending_approvals_are_listed_until_decided_or_ended():
    request = ev.ApprovalRequest(name="bash", call_id="c", arguments={"command": "ls"}, diff=None, turn_id="t")
    state = replay([ev.TurnStart(prompt="p", turn_id="t"), ev.ToolCall(name="bash", call_id="c", turn_id="t"),
                    request])
    assert [a.call_id for a in state.approvals] == ["c"]
    assert state.turn.items[-1].status == "awaiting_approval"
    decided = reduce(state, ev.ApprovalDecision(name="bash", call_id="c", decision="approve", turn_id="t"))
    assert decided.approvals == () and decided.turn.items[-1].status == "running"
    ended = reduce(state, ev.TurnEnd(reason="aborted", turn_id="t"))
    assert ended.approvals == () and ended.transcript[-1].items[-1].status == "interrupted"


def test_a_pending_approval_keeps_an_mcp_tools_annotations():
    hints = {"destructiveHint": True}
    state = replay([ev.TurnStart(prompt="p", turn_id="t"),
                    ev.ApprovalRequest(name="mcp__fs__rm", call_id="c", annotations=hints, turn_id="t")])
    assert state.approvals[0].annotations == hints


def test_events_of_another_turn_do_not_touch_the_turn_in_flight():
    state = replay([ev.TurnStart(prompt="p", turn_id="t"), ev.TextDelta(text="x", turn_id="other")])
    assert state.turn.items == ()


def test_out_of_turn_errors_are_notices_and_bounded():
    state = replay([ev.Error(message=f"e{i}") for i in range(30)])
    assert len(state.notices) == 20 and state.notices[-1].text == "e29"


def test_turns_from_stored_messages():
    turns = turns_from_messages([
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [{"id": "c", "name": "glob", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c", "name": "glob", "content": "a.py", "is_error": False},
        {"role": "assistant", "content": "One file."},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "d", "name": "bash", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "d", "name": "bash",
         "content": "interrupted: the turn was aborted before this call finished", "is_error": True},
    ])
    assert [t.prompt for t in turns] == ["list", "again"]
    assert [type(i).__name__ for i in turns[0].items] == ["TextItem", "ToolItem", "TextItem"]
    assert turns[0].text == "One file." and turns[1].items[0].status == "interrupted"


# ----- the engine keeps its promises: one turn_end per prompt, one tool_result per call ------------------

@pytest.mark.process
def test_abort_ends_every_queued_prompt_and_interrupts_the_running_call(make_agent):
    started = threading.Event()
    agent = make_agent(Reply(tool_calls=[Call("bash", {"command": "sleep 30"})]), approval="auto")
    seen: list = []
    agent.subscribe(seen.append)
    agent.subscribe(lambda e: started.set() if isinstance(e, ev.ToolCall) else None)
    futures = [agent.submit(p) for p in ("one", "two", "three")]
    assert started.wait(10)
    agent.abort()
    assert [f.result(10).reason for f in futures] == ["aborted"] * 3
    ends = [e for e in seen if isinstance(e, ev.TurnEnd)]
    assert sorted(e.turn_id for e in ends) == sorted({e.turn_id for e in seen if e.turn_id})
    results = [e for e in seen if isinstance(e, ev.ToolResult)]
    assert len(results) == 1 and results[0].status in ("interrupted", "killed")
    snapshot = agent.snapshot()
    assert snapshot.queue == () and snapshot.turn is None and snapshot.approvals == ()


@pytest.mark.process
def test_a_call_cut_while_its_arguments_stream_gets_an_interrupted_result(make_agent):
    cut = threading.Event()
    agent = make_agent(Slow(1.0, Reply(tool_calls=[Call("glob", {"pattern": "*.py"})])))
    seen: list = []
    agent.subscribe(seen.append)
    agent.subscribe(lambda e: cut.set() if isinstance(e, ev.ToolInputStart) else None)
    future = agent.submit("find files")
    assert cut.wait(10)
    agent.abort()
    assert future.result(10).reason == "aborted"
    starts = [e.call_id for e in seen if isinstance(e, ev.ToolInputStart)]
    results = [(e.call_id, e.status) for e in seen if isinstance(e, ev.ToolResult)]
    assert results == [(starts[0], "interrupted")]


@pytest.mark.process
def test_snapshot_joins_stored_turns_and_live_ones(make_agent, tmp_path):
    first = make_agent("Hello there.")
    first.run("hi")
    session = first.session_id
    first.close()
    again = make_agent("Again.", session=session)
    assert [t.prompt for t in again.snapshot().transcript] == ["hi"]
    again.run("more")
    snap = again.snapshot()
    assert [t.prompt for t in snap.transcript] == ["hi", "more"] and snap.transcript[-1].text == "Again."
    assert snap.session_id == session and snap.title == "hi"


@pytest.mark.process
def test_memory_injected_into_a_turn_is_an_event(make_agent):
    agent = make_agent("ok")
    agent.memory.remember("Tests run with pytest -q", category="fact")
    result = agent.run("hi")
    injected = [e for e in result.events if isinstance(e, ev.MemoryInjected)]
    assert [e["text"] for e in injected[0].entries] == ["Tests run with pytest -q"]
    assert agent.snapshot().memory[0]["text"] == "Tests run with pytest -q"


def test_tool_item_state_is_typed():
    state = replay([ev.TurnStart(turn_id="t"), ev.ToolCall(name="x", call_id="c", turn_id="t")])
    assert isinstance(state.turn.items[0], ToolItem)


def test_an_undos_replay_plan_and_its_outcome_stay_on_the_turn():
    plan = [{"execution_count": 1, "cell_id": "load", "seconds": 0.5, "origin": "history+notebook", "line": "df = 1"}]
    s = reduce(AgentState(), ev.TurnStart(turn_id="t1", prompt="go"))
    s = reduce(s, ev.TurnEnd(turn_id="t1", reason="done"))
    s = reduce(s, ev.Checkpoint(turn_id="t1", action="undone", turn=1, not_restored=["df (changed in place)"],
                                replay=plan, redo_turn=1))
    mark = s.transcript[0].checkpoint
    assert mark is not None and mark.replay == tuple(plan) and mark.replayed is None
    s = reduce(s, ev.KernelReplayed(turn_id="t1", turn=1, ran=[1], failed=2, failed_cell_id="x", error="KeyError: 'a'"))
    assert s.transcript[0].checkpoint.replayed == {"ran": [1], "failed": 2, "failed_cell_id": "x",
                                                   "error": "KeyError: 'a'"}
    assert AgentState.from_dict(json.loads(json.dumps(s.to_dict()))) == s  # as the server sends it to a joining tab
    # A redo (or another undo) replaces the mark: the outcome of an earlier replay is not carried over.
    s = reduce(s, ev.Checkpoint(turn_id="t1", action="redone", turn=1, undo_turn=1))
    assert s.transcript[0].checkpoint.replay == () and s.transcript[0].checkpoint.replayed is None
    # An outcome for a turn with no checkpoint shown changes nothing.
    assert reduce(s, ev.KernelReplayed(turn_id="other", turn=3)) == s
