"""The absorber through the public Agent API: notes between turns, change counts, errors, removal, dedupe."""

from __future__ import annotations

import pytest
import time

from nbagent import events as ev
from nbagent.attached.poller import Poller
from nbagent.testing.replies import Call, Reply

pytestmark = pytest.mark.process


def notes_in(request):
    return [m for m in request.messages if m.get("role") == "system"]


def poll(agent, now):
    """One poller pass at a given time (every source due), as the background poller would run it."""
    poller = Poller(agent.config.workspace, min_every=0)
    try:
        return poller.poll_once(now=now)
    finally:
        poller.stop()


def test_three_changes_between_turns_give_one_note_with_the_count(make_agent, tmp_path):
    (tmp_path / "state.txt").write_text("v0\n")
    agent = make_agent("one", "two", "three")
    agent.context.attach("state", command="cat state.txt", why="the build state")
    first = agent.run("hello")
    notes = [e for e in first.events if isinstance(e, ev.ContextNote)]
    assert [(n.source, n.change) for n in notes] == [("state", "attached")]
    for i, value in enumerate(("v1", "v2", "v3"), start=1):
        (tmp_path / "state.txt").write_text(value + "\n")
        assert poll(agent, now=time.time() + 100 * i) == {"state": "new"}
    second = agent.run("again")
    notes = [e for e in second.events if isinstance(e, ev.ContextNote)]
    assert len(notes) == 1 and notes[0].change == "updated" and notes[0].changes == 3
    assert notes[0].summary == "v3"
    third = agent.run("and again")
    assert not [e for e in third.events if isinstance(e, ev.ContextNote)]
    requests = agent.runtime.model.requests
    assert len(notes_in(requests[0])) == 1 and len(notes_in(requests[1])) == 2 and len(notes_in(requests[2])) == 2
    note = notes_in(requests[1])[-1]["content"]
    assert 'changed 3 times since you last saw it' in note and "Attached because: the build state" in note
    # The note sits before the turn's prompt, at the tail of the history, never in the system prompt.
    assert requests[1].messages[-1] == {"role": "user", "content": "again"}
    assert "v3" not in requests[1].system


def test_a_failing_command_gives_an_error_note_and_keeps_the_last_good_text(make_agent, tmp_path):
    (tmp_path / "flag").write_text("good text\n")
    agent = make_agent("ok", Reply(tool_calls=[Call("context_read", {"name": "check"})]), "read it")
    agent.context.attach("check", command="cat flag")
    agent.run("start")
    (tmp_path / "flag").unlink()
    assert poll(agent, now=time.time() + 100) == {"check": "error"}
    result = agent.run("go on")
    notes = [e for e in result.events if isinstance(e, ev.ContextNote)]
    assert [(n.source, n.change) for n in notes] == [("check", "failing")]
    assert "could not be refreshed" in notes[0].text and "exit 1" in notes[0].text
    read = [e for e in result.events if isinstance(e, ev.ToolResult)][0]
    assert read.status == "done" and "good text" in read.output and "failing since" in read.output
    # The same failure is told once; the next failure run (after a success) is a new note.
    assert poll(agent, now=time.time() + 200) == {"check": "error"}
    assert not agent.context.store.sources(agent.session_id)[0].snapshot.text is None


def test_push_mute_remove_and_declined(make_agent):
    agent = make_agent("a", "b", "c", "d")
    assert agent.context.push("notes", "first\nmore") == "new"
    assert agent.context.push("notes", "first\nmore") == "same"
    agent.run("one")
    agent.context.mute("notes")
    agent.context.push("notes", "second")
    agent.context.push("notes", "third")
    assert not [e for e in agent.run("two").events if isinstance(e, ev.ContextNote)]
    agent.context.unmute("notes")
    notes = [e for e in agent.run("three").events if isinstance(e, ev.ContextNote)]
    assert [(n.change, n.changes) for n in notes] == [("updated", 2)]
    agent.context.remove("notes")
    notes = [e for e in agent.run("four").events if isinstance(e, ev.ContextNote)]
    assert [n.change for n in notes] == ["removed"]
    store = agent.context.store
    assert store.is_declined(agent.session_id, "notes")
    frame = agent.context.sources()
    assert list(frame.columns)[:4] == ["name", "kind", "scope", "status"] and frame.empty


def test_the_same_text_back_again_is_a_new_revision(make_agent):
    agent = make_agent("a", "b")
    agent.context.push("flip", "A")
    agent.run("one")
    agent.context.push("flip", "B")
    agent.context.push("flip", "A")
    notes = [e for e in agent.run("two").events if isinstance(e, ev.ContextNote)]
    assert len(notes) == 1 and notes[0].changes == 2 and notes[0].note_id.startswith("ctx-flip-3-")


def test_sources_move_with_the_session_on_fork(make_agent):
    agent = make_agent("a", "b")
    agent.context.push("log", "line 1")
    agent.run("one")
    before = agent.session_id
    agent.fork()
    assert agent.session_id != before
    assert [s.name for s in agent.context.store.sources(agent.session_id)] == ["log"]
    agent.context.push("log", "line 2")
    notes = [e for e in agent.run("two").events if isinstance(e, ev.ContextNote)]
    assert [(n.change, n.changes) for n in notes] == [("updated", 1)]


def test_bad_names_and_bad_pushes_are_refused_clearly(make_agent):
    import pytest

    from nbagent.attached import SourceError

    agent = make_agent()
    for bad in ("", "../x", "a b", "x" * 80):
        with pytest.raises(SourceError, match="bad source name"):
            agent.context.push(bad, "text")
    with pytest.raises(SourceError, match="empty"):
        agent.context.push("empty", "   ")
    with pytest.raises(SourceError, match="exactly one"):
        agent.context.attach("both", command="true", file="x")
    agent.context.attach("cmd", command="echo hi")
    with pytest.raises(SourceError, match="poller writes it"):
        agent.context.push("cmd", "no")


def test_a_wake_source_starts_a_turn_when_it_changes_and_only_then(make_agent):
    import threading

    started = threading.Event()
    agent = make_agent("Noted the failure.", context_wake=True, context_tick=0.05)
    agent.context.push("quiet", "nothing to see")           # no wake: never starts a turn
    prompts = []
    agent.subscribe(lambda e: (prompts.append(e.prompt), started.set()) if isinstance(e, ev.TurnStart) else None)
    agent.context.push("trainlog", "epoch 3: ERROR nan loss", wake=True)
    assert started.wait(30)
    assert agent.wait(30)
    assert prompts == ["[context wake: trainlog changed]"]
    request = agent.runtime.model.requests[0]
    assert [m.get("source") for m in request.messages if m["role"] == "system"] == ["quiet", "trainlog"]
    assert agent.runtime.context.due_wakes(0.0) == []      # delivered: nothing left to wake for


def test_the_output_of_a_long_running_block_is_a_source(make_agent, capsys):
    agent = make_agent("saw it")
    with agent.context.capture("training", every=3600):
        for epoch in range(3):
            print(f"epoch {epoch}: loss {1 / (epoch + 1):.2f}")
    assert "epoch 2: loss 0.33" in capsys.readouterr().out  # still printed where it always was
    source = agent.context.store.get("training", agent.session_id)
    assert source.kind == "cell" and source.snapshot.text.endswith("epoch 2: loss 0.33\n")
    notes = [e for e in agent.run("how is training going?").events if isinstance(e, ev.ContextNote)]
    assert [(n.source, n.change) for n in notes] == [("training", "attached")]


def test_an_old_sessions_command_sources_are_not_polled(make_agent):
    agent = make_agent()
    agent.context.attach("mine", command="echo session source")
    agent.context.attach("shared", command="echo workspace source", workspace=True)
    soon, later = time.time() + 60, time.time() + 3 * 24 * 3600
    assert sorted(poll(agent, now=soon)) == ["mine", "shared"]
    assert sorted(poll(agent, now=later)) == ["shared"]  # the session was not used for three days
