"""Whole scripted turns of a real Agent through the live view: the approval card clicked while the
turn waits, Stop, Abort and the queue. Widget state is read through the widgets' traits."""

from __future__ import annotations

import pytest
from nbagent.ids import short_id
from nbagent.jupyter.widgets.view_registry import hub_for
from nbagent.testing.replies import Call, Reply, Slow

pytestmark = pytest.mark.process

TODOS = [{"content": "look around", "status": "completed"}, {"content": "say hello", "status": "in_progress"}]


def start(agent, prompt):
    hub = hub_for(agent)
    view = hub.turn_view(prompt, short_id("turn_"))
    return view, hub.submit(view, prompt)


def test_a_whole_turn_with_an_approval_clicked_while_it_waits(make_agent, workspace, wait_for):
    agent = make_agent(
        Reply(reasoning="The user wants a greeting file.", text="I'll plan first.",
              tool_calls=[Call("todo_write", {"todos": TODOS}, id="t1")]),
        Reply(text="Writing it.", tool_calls=[Call("bash", {"command": "echo hello > hello.txt"}, id="b1")]),
        Reply(text="Done: **hello.txt** says hello."),
        approval="ask")
    view, future = start(agent, "make hello.txt")
    card = wait_for(lambda: view.cards.get("b1"))
    assert not future.done() and view.rows["b1"].status == "awaiting_approval"
    assert "echo hello" in card.body.value
    card.approve_button.click()  # the test clicks as a user would, from the kernel's thread
    result = future.result(30)
    assert view.wait(5)
    view.flush()
    assert result.reason == "done" and (workspace / "hello.txt").read_text() == "hello\n"
    assert view.state == "done" and view.approvals.children == ()
    assert view.rows["t1"].status == "done" and view.rows["b1"].status == "done"
    assert "<strong>hello.txt</strong>" in view.answer.value
    assert view.answer.markdown.startswith("I'll plan first.")
    (reasoning,) = view.answer.reasonings
    assert reasoning.dropped and reasoning.summary.value.startswith("thought for")
    assert view.todos.counts.value == "1 of 2 done" and view.todos.progress.value == 1
    assert view.header.session_id == agent.session_id and view.header.title == "make hello.txt"
    assert view.header.input_tokens > 0


def test_deny_is_reported_on_the_row(make_agent, workspace, wait_for):
    agent = make_agent(Reply(tool_calls=[Call("bash", {"command": "touch nope"}, id="b1")]), Reply(text="OK."),
                       approval="ask")
    view, future = start(agent, "try")
    wait_for(lambda: view.cards.get("b1")).deny_button.click()
    future.result(30)
    view.wait(5)
    view.flush()
    assert view.rows["b1"].status == "denied" and not (workspace / "nope").exists()


def test_stop_kills_the_command_and_the_turn_goes_on(make_agent, wait_for):
    agent = make_agent(Reply(tool_calls=[Call("bash", {"command": "sleep 30"}, id="b1")]),
                       Reply(text="The command was stopped."))
    view, future = start(agent, "wait a while")
    wait_for(lambda: view.rows.get("b1") and _running_children())
    view.controls.stop_button.click()
    result = future.result(30)
    view.wait(5)
    view.flush()
    assert view.rows["b1"].status == "killed"
    assert result.reason == "done" and "stopped" in view.answer.markdown


def _running_children() -> bool:
    import psutil

    def cmdline(process) -> str:
        try:
            return " ".join(process.cmdline())
        except psutil.Error:  # ended meanwhile, or a zombie not yet reaped (another child: git, rg)
            return ""

    return any("sleep" in cmdline(p) for p in psutil.Process().children(recursive=True))


def test_abort_ends_the_turn_and_clears_the_queue(make_agent, wait_for):
    agent = make_agent(Slow(0.05, Reply(text="a long answer " * 200)), "never said", "never said either")
    first, f1 = start(agent, "first")
    second, f2 = start(agent, "second")
    third, f3 = start(agent, "third")
    wait_for(lambda: first.answer.markdown)
    wait_for(lambda: second.state == "queued" and first.controls.queued == 2)
    first.controls.abort_button.click()
    assert f1.result(30).reason == "aborted"
    assert f2.result(30).reason == "aborted" and f3.result(30).reason == "aborted"
    assert agent.queued == 0 and agent.wait(5)
    for view in (first, second, third):
        assert view.wait(5)
        view.flush()
    assert first.state == second.state == third.state == "aborted"
    assert "turn ended: aborted" in first.notes.value and not second.controls.running


def test_queued_prompts_show_as_queued_and_drain_in_order(make_agent, wait_for):
    agent = make_agent(Slow(0.02, Reply(text="one " * 100)), "two", "three")
    views = [start(agent, p) for p in ("first", "second", "third")]
    wait_for(lambda: views[2][0].state == "queued" and views[1][0].state == "queued")
    # (the engine's position counts a prompt not yet started as ahead, so only the label is checked)
    assert all(v.header.status.startswith("queued (position ") for v, _ in views[1:])
    results = [f.result(30) for _, f in views]
    assert [r.text.split()[0] for r in results] == ["one", "two", "three"]
    for view, _ in views:
        view.wait(5)
        view.flush()
    assert [v.state for v, _ in views] == ["done", "done", "done"]


def test_agent_view_gains_a_view_per_turn(make_agent, wait_for):
    from nbagent.jupyter.widgets.agent_view import AgentView

    agent = make_agent("first answer", "second answer")
    follower = AgentView(agent)
    agent.run("one")
    agent.run("two")
    wait_for(lambda: len(follower.turns) == 2 and all(t.ended for t in follower.turns))
    for turn in follower.turns:
        turn.flush()
    assert [t.answer.markdown for t in follower.turns] == ["first answer", "second answer"]
    assert [t.prompt for t in follower.turns] == ["one", "two"]
    follower.clear()
    assert follower.turns == []
    follower.close()


def test_the_memory_a_turn_carries_shows_as_injected(make_agent, wait_for):
    agent = make_agent("Use make test.")
    agent.runtime.state.memory.remember("command", "run the tests with: make test")
    view, future = start(agent, "how do I test?")
    future.result(30)
    view.wait(5)
    view.flush()
    assert [e["text"] for e in view.memory.injected] == ["run the tests with: make test"]
    assert "memory used this turn (1)" in view.memory.body.value
