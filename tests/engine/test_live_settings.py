"""Agent.reconfigure: settings change on the live agent and its session; the approval mode is read when
each decision is made."""

from __future__ import annotations

import threading

import pytest

from nbagent import events as ev
from nbagent.errors import ConfigError
from nbagent.testing import Call, Reply


def write_call(name="a.txt"):
    return Reply(tool_calls=[Call("write_file", {"path": name, "content": "x\n"})])


@pytest.mark.process
def test_a_prompt_queued_before_a_mode_change_runs_in_the_new_mode(make_agent, tmp_path):
    gate = threading.Event()
    agent = make_agent(Reply(tool_calls=[Call("bash", {"command": "true"})]), "first done",
                       write_call(), "second done", approval="auto")
    agent.subscribe(lambda e: gate.wait(10) if isinstance(e, ev.ToolCall) and e.name == "bash" else None)
    first = agent.submit("run true")
    second = agent.submit("write a.txt")  # queued while the first turn runs
    agent.reconfigure(approval="read-only")
    gate.set()
    assert first.result(10).ok
    result = second.result(10)
    decisions = [e for e in result.events if isinstance(e, ev.ApprovalDecision)]
    assert [(d.decision, d.by) for d in decisions] == [("deny", "read-only mode")]
    assert not (tmp_path / "a.txt").exists()


@pytest.mark.process
def test_a_mode_change_during_a_turn_applies_to_its_next_decision(make_agent, tmp_path):
    agent = make_agent(write_call("one.txt"), write_call("two.txt"), "done", approval="ask")
    asked = []

    def on_event(event):
        if isinstance(event, ev.ApprovalRequest):
            asked.append(event.call_id)
            agent.reconfigure(approval="auto")  # from the agent's own thread, mid-turn
            agent.decide(event.call_id, "approve")

    agent.subscribe(on_event)
    assert agent.run("write two files").ok
    assert len(asked) == 1  # the second write ran without asking
    assert (tmp_path / "one.txt").exists() and (tmp_path / "two.txt").exists()


@pytest.mark.process
def test_reconfigure_keeps_the_session_and_reports_the_change(make_agent):
    agent = make_agent("one", "two")
    agent.run("first")
    session = agent.session_id
    seen = []
    agent.subscribe(seen.append)
    changed = agent.reconfigure(model="other-model", toolsets=["core"], max_steps=7)
    assert changed["model"] == "other-model" and changed["max_steps"] == 7
    assert agent.session_id == session
    assert list(agent.registry.enabled) == ["core"] and "git_status" not in agent.registry.names()
    assert agent.run("second").ok and agent.session.model == "other-model"
    [event] = [e for e in seen if isinstance(e, ev.SettingsChanged)]
    assert event.settings["model"] == "other-model" and event.settings["max_steps"] == 7
    assert agent.snapshot().settings["max_steps"] == 7


def test_reconfigure_refuses_what_makes_a_different_agent(make_agent, tmp_path):
    agent = make_agent("x")
    with pytest.raises(ConfigError, match="workspace"):
        agent.reconfigure(workspace=tmp_path)
    with pytest.raises(ConfigError, match="approval"):
        agent.reconfigure(approval="sometimes")


@pytest.mark.process
def test_per_tool_policies_from_the_configuration(make_agent, tmp_path):
    agent = make_agent(Reply(tool_calls=[Call("bash", {"command": "echo hi"})]), "ok", approval="auto",
                       tool_approvals={"bash": "always_ask"})
    assert agent.approval_policy("bash") == "always_ask" and agent.approval_policy("read_file") == "never"
    requests = []

    def on_event(event):
        if isinstance(event, ev.ApprovalRequest):
            requests.append(event.name)
            agent.decide(event.call_id, "deny")

    agent.subscribe(on_event)
    assert agent.run("say hi").ok and requests == ["bash"]


@pytest.mark.process
def test_todo_list_needs_no_approval_even_read_only(make_agent):
    agent = make_agent(Reply(tool_calls=[Call("todo_write", {"todos": [{"content": "x", "status": "pending"}]})]),
                       "ok", approval="read-only")
    result = agent.run("plan")
    assert result.ok and agent.todos[0]["content"] == "x"
    assert not [e for e in result.events if isinstance(e, ev.ApprovalDecision)]


@pytest.mark.process
def test_default_puts_a_setting_back_to_what_the_configuration_gives(tmp_path, monkeypatch):
    from nbagent import DEFAULT, Agent
    from nbagent.testing.server import ScriptedServer

    monkeypatch.setenv("NBAGENT_MODEL", "configured-model")
    monkeypatch.setenv("NBAGENT_APPROVAL", "read-only")
    with ScriptedServer() as server:
        server.enqueue("one", "two", "three")
        agent = Agent(workspace=tmp_path, base_url=server.url, api_key="sk-test", model="given-model",
                      approval="auto", persist=False, memory=False)
        try:
            agent.run("first")
            agent.reconfigure(model="live-model")
            agent.run("second")
            seen = []
            agent.subscribe(seen.append)
            changed = agent.reconfigure(model=DEFAULT, approval=DEFAULT)
            agent.run("third")
        finally:
            agent.close()
        models = [r.body["model"] for r in server.model_requests()]
    assert models == ["given-model", "live-model", "configured-model"]
    assert changed == {"model": "configured-model", "approval": "read-only"}
    assert [e.settings for e in seen if isinstance(e, ev.SettingsChanged)] == [changed]


def test_default_model_with_none_configured_is_the_endpoints_own(make_agent, tmp_path):
    from nbagent import DEFAULT
    from nbagent.model.factory import DEFAULT_OPENAI_MODEL

    agent = make_agent("hi")
    agent.reconfigure(model="other")
    assert agent.reconfigure(model=DEFAULT) == {"model": DEFAULT_OPENAI_MODEL}  # no endpoint: OpenAI's
    agent.runtime.config.base_url = "http://127.0.0.1:9/v1"  # a server of one's own names no default
    agent.reconfigure(model="other")
    with pytest.raises(ConfigError, match="no configured model to go back to"):
        agent.reconfigure(model=DEFAULT)
    assert agent.config.model == "other"  # refused: nothing changed


def test_default_tool_sets_follow_the_agents_profile(make_agent):
    from nbagent import DEFAULT

    agent = make_agent("hi", profile="small")
    built = agent.config.toolsets
    assert "read" in built and "git" not in built
    agent.reconfigure(toolsets=["core", "git"])
    agent.reconfigure(toolsets=DEFAULT)
    assert agent.config.toolsets == built  # the small profile's, not the general default list
