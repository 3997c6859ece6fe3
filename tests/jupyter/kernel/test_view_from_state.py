"""A live view opened mid-turn renders exactly what a view there from the start renders: the same widget
tree, trait for trait (everything the browser is sent), for every recorded event sequence cut at every
point, and for a real Agent's turn joined while it waits for an approval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbagent import events as ev
from nbagent.ids import short_id
from nbagent.jupyter.widgets.view_registry import ViewHub, hub_for
from nbagent.jupyter.widgets.live_state import LiveState
from nbagent.jupyter.widgets.turn import TurnView
from nbagent.testing import Call, Reply
from tests.paths import FIXTURES

SEQUENCES = sorted((FIXTURES / "event_sequences").glob("*.json"))


def rendered(widget) -> tuple:
    """The widget tree as the frontend gets it: each widget's synced state, children and layout inlined."""
    out = {}
    for key, value in widget.get_state().items():
        if key == "children":
            out[key] = [rendered(child) for child in widget.children]
        elif isinstance(value, str) and value.startswith("IPY_MODEL_"):
            out[key] = rendered(getattr(widget, key))
        else:
            out[key] = value
    return type(widget).__name__, out


def live_turns(state) -> set[str]:
    return ({state.turn.turn_id} if state.turn else set()) | {q.turn_id for q in state.queue}


def apply(live: LiveState, views: list[TurnView], event: ev.Event) -> None:
    """What the view registry does with each event of the agent."""
    state = live.apply(event)
    for view in views:
        view.update(state, event)
        view.flush()


@pytest.mark.parametrize("path", SEQUENCES, ids=lambda p: p.stem)
def test_a_view_opened_at_any_point_of_a_turn_renders_as_one_there_from_the_start(path):
    events = [ev.event_from_dict(e) for e in json.loads(path.read_text())["events"]]
    turn_ids = list(dict.fromkeys(e.turn_id for e in events if e.turn_id))
    for cut in range(len(events) + 1):
        live = LiveState()
        early = [TurnView(turn_id=t, live=live) for t in turn_ids]
        for event in events[:cut]:
            apply(live, early, event)
        joining = live_turns(live.state)
        if not joining:
            continue
        late = [TurnView(turn_id=t, live=live) for t in turn_ids if t in joining]
        pairs = [(next(v for v in early if v.turn_id == l.turn_id), l) for l in late]
        for started, joined in pairs:
            assert rendered(joined) == rendered(started), f"{path.stem}: {joined.turn_id} joined after {cut} events"
        for event in events[cut:]:
            apply(live, early + late, event)
        for started, joined in pairs:
            assert joined.ended and started.ended
            assert rendered(joined) == rendered(started), f"{path.stem}: {joined.turn_id} at the end, cut {cut}"


def test_the_recorded_sequences_cover_every_kind_of_item():
    kinds = set()
    for path in SEQUENCES:
        live = LiveState()
        for e in json.loads(path.read_text())["events"]:
            live.apply(ev.event_from_dict(e))
        kinds |= {type(i).__name__ for t in live.state.transcript for i in t.items}
    assert kinds >= {"TextItem", "ReasoningItem", "ToolItem", "NoticeItem"}


@pytest.mark.process
def test_a_real_turn_joined_while_it_waits_renders_as_the_view_that_watched_it(make_agent, wait_for):
    todos = [{"content": "look", "status": "completed"}, {"content": "write", "status": "in_progress"}]
    agent = make_agent(
        Reply(text="Planning.", tool_calls=[Call("todo_write", {"todos": todos}, id="t1")]),
        Reply(text="Writing.", tool_calls=[Call("bash", {"command": "echo hi > hi.txt"}, id="b1")]),
        Reply(text="Done: **hi.txt**."),
        approval="ask")
    hub = hub_for(agent)
    started = hub.turn_view("make hi.txt", short_id("turn_"))
    future = hub.submit(started, "make hi.txt")
    wait_for(lambda: started.cards.get("b1"))
    joined_hub = ViewHub(agent)  # a second registry: it starts from Agent.watch's snapshot, mid-turn
    try:
        (joined,) = [v for v in _followed(joined_hub) if v.turn_id == started.turn_id]
        started.flush()
        joined.flush()
        assert rendered(joined) == rendered(started)
        assert joined.rows["b1"].status == "awaiting_approval" and joined.answer.markdown.startswith("Planning.")
        joined.cards["b1"].approve_button.click()  # the late view's card decides the turn
        assert future.result(30).reason == "done"
        assert started.wait(5) and joined.wait(5)
        started.flush()
        joined.flush()
        assert rendered(joined) == rendered(started)
        assert started.state == "done" and started.cards == {} and started.rows["b1"].status == "done"
    finally:
        joined_hub.close()


def _followed(hub: ViewHub) -> list:
    views: list = []
    hub.follow(views.append)
    return views


@pytest.mark.process
def test_an_undo_made_elsewhere_shows_on_the_finished_turn(make_agent, workspace):
    """/undo, the panel or code: the turn's checkpoint in the state changes, and so do its buttons."""
    agent = make_agent(Reply(tool_calls=[Call("write_file", {"path": "a.txt", "content": "new\n"})]), "Wrote it.")
    (workspace / "a.txt").write_text("old\n")
    hub = hub_for(agent)
    view = hub.turn_view("write a.txt", short_id("turn_"))
    hub.submit(view, "write a.txt").result(30)
    assert view.wait(5)
    view.flush()
    bar = view.checkpoint
    assert "1 file changed: a.txt" in bar.label.value and bar.redo_button.layout.display == "none"
    agent.undo()  # not the view's button
    view.flush()
    assert (workspace / "a.txt").read_text() == "old\n"
    assert bar.undo_button.layout.display == "none" and bar.redo_button.layout.display == ""
    agent.redo()
    view.flush()
    assert bar.undo_button.layout.display == "" and bar.redo_button.layout.display == "none"
