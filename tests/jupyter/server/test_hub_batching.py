"""The hub reduces a slice of events with a run of deltas as one delta: the state must be the one that
reducing every event gives (a joining tab starts from it), and every event still goes out on its own line."""

from __future__ import annotations

import json

import pytest

from nbagent import events as ev
from nbagent.render.agent_state import AgentState, reduce
from nbagent.jupyter.server.hub import _line, _reduce_all
from nbagent.testing.replies import Call, Reply

pytestmark = pytest.mark.process  # the agent's checkpoints start git


def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: what to look up
    """
    return f"value of {key}"


@pytest.fixture
def events(make_agent) -> list[ev.Event]:
    """Two real turns, streamed a character at a time: reasoning, text, a tool call, more text."""
    from nbagent import function_tool
    from nbagent.testing.scripted import ScriptedModel

    model = ScriptedModel([Reply(reasoning="let me think", text="I will look", tool_calls=[Call("lookup", {"key": "a"})]),
                           Reply(text="found it: value of a"), "second turn, short"], chunk_size=1)
    agent = make_agent(model=model, tools=[function_tool(lookup, read_only=True)])
    seen: list[ev.Event] = []
    agent.subscribe(seen.append)
    agent.run("look a up")
    agent.run("again")
    return seen


@pytest.mark.parametrize("size", [1, 3, 7, 200])
def test_a_slice_reduced_with_its_deltas_joined_gives_the_state_of_every_event_reduced(events, size):
    one_by_one = AgentState()
    for event in events:
        one_by_one = reduce(one_by_one, event)
    sliced = AgentState()
    for start in range(0, len(events), size):
        sliced = _reduce_all(sliced, events[start:start + size])
    assert sliced == one_by_one
    assert any(isinstance(e, ev.ReasoningDelta) for e in events) and sum(isinstance(e, ev.TextDelta) for e in events) > 20


def test_every_event_is_one_line_of_the_json_it_always_was(events):
    for event in events:
        line = _line(event)
        assert "\n" not in line and json.loads(line) == json.loads(json.dumps(event.to_dict(), default=str))
    assert json.loads(_line(ev.TextDelta(text="half a pair \ud800", turn_id="t")))["text"] == "half a pair \ud800"
