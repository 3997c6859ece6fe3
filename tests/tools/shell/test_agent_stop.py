"""Through a real Agent: Stop from another thread during bash, and a hand-over the model then waits on."""

from __future__ import annotations

import time

import pytest

from nbagent import Agent
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

pytestmark = [pytest.mark.process, pytest.mark.integration]


def test_stop_command_during_bash_is_reported_as_killed(tmp_path):
    model = ScriptedModel([Reply(tool_calls=[Call("bash", {"command": "sleep 300; true"})]), "stopped it"])
    agent = Agent(model=model, workspace=tmp_path, approval="auto")
    try:
        future = agent.submit("run it")
        deadline = time.monotonic() + 10
        while not agent.runtime.processes.running:
            assert time.monotonic() < deadline, "bash never started"
            time.sleep(0.01)
        assert agent.stop_command() >= 1  # called from this thread, not the agent's
        result = future.result(timeout=20)
    finally:
        agent.close()
    (call,) = result.tool_calls
    assert call["status"] == "killed" and call["output"] == "killed by the user"
    assert result.text == "stopped it"


def test_stop_pressed_before_the_shell_started_still_stops_the_command(tmp_path):
    from nbagent import events as ev

    model = ScriptedModel([Reply(tool_calls=[Call("bash", {"command": "sleep 300; true"})]),
                           Reply(tool_calls=[Call("bash", {"command": "echo later"})]), "done"])
    agent = Agent(model=model, workspace=tmp_path, approval="auto", persist=False, memory=False)
    stopped = []

    def stop_on_first_call(event):  # on the agent's thread, before the tool runs: the shell is not up yet
        if isinstance(event, ev.ToolCall) and not stopped:
            stopped.append(agent.stop_command())

    agent.subscribe(stop_on_first_call)
    try:
        result = agent.run("run it", timeout=30)
    finally:
        agent.close()
    first, second = result.tool_calls
    assert stopped == [0]  # nothing was running yet when Stop came
    assert first["status"] == "killed" and first["output"] == "killed by the user"
    assert second["status"] == "done" and "later" in second["output"]  # the Stop ended with its call


def test_a_handed_over_command_is_waited_on_in_the_next_step(tmp_path):
    model = ScriptedModel([
        Reply(tool_calls=[Call("bash", {"command": "sleep 0.8; echo built; exit 4", "timeout": 0.2})]),
        # the test cannot know the task id in advance: task_list finds it
        Reply(tool_calls=[Call("task_list", {})]),
        "done",
    ])
    agent = Agent(model=model, workspace=tmp_path, approval="auto")
    try:
        result = agent.run("build")
        task_id = result.tool_calls[0]["output"].split("task_id: ")[1].split()[0]
        assert result.tool_calls[1]["output"].startswith(task_id)
        model.enqueue(Reply(tool_calls=[Call("task_wait", {"id": task_id})]), "ok")
        waited = agent.run("wait for it").tool_calls[0]
    finally:
        agent.close()
    assert waited["status"] == "done"
    assert waited["output"].startswith(f"task {task_id} exited with code 4")
    assert "built" in waited["output"]
