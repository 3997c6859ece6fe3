"""SessionState from a configuration, and the state round trip through a real Agent and ScriptedModel."""

from __future__ import annotations

import pytest

from nbagent import Agent
from nbagent.config import AgentConfig
from nbagent.errors import StoreError
from nbagent.engine.session_state import describe_model, open_state
from nbagent.store.sessions import SessionStore
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel


def test_persisted_state_continues_the_newest_session_of_its_origin(workspace):
    config = AgentConfig.load(workspace=workspace, origin=str(workspace / "nb.ipynb"))
    first = open_state(config)
    first.session.begin_turn("hello")
    first.session.append([{"role": "user", "content": "hello"}])
    first.remember_prompt("hello")
    first.remember_prompt("hello")
    first.close()
    again = open_state(config, selector="continue")
    assert again.session.id == first.session.id and again.session.messages == [{"role": "user", "content": "hello"}]
    assert again.origin == "nb.ipynb" and again.prompts() == ["hello"]
    assert again.tasks is None and again.store is not None
    forked = again.fork()
    assert forked.session.id != again.session.id and forked.session.messages == again.session.messages


def test_persist_off_keeps_everything_in_memory(workspace):
    config = AgentConfig.load(workspace=workspace, persist=False)
    state = open_state(config)
    state.session.begin_turn("one")
    state.session.append([{"role": "user", "content": "one"}, {"role": "assistant", "content": "1"}])
    state.session.begin_turn("two")
    state.session.append([{"role": "user", "content": "two"}])
    state.memory.remember("fact", "in memory only")
    assert state.fork(up_to_turn=1).session.messages == state.session.messages[:2]
    assert not (workspace / ".nbagent" / "nbagent.db").exists()
    with pytest.raises(StoreError, match="persist is off"):
        open_state(config, selector="01abc")


def test_a_corrupt_database_is_reported_and_the_agent_state_works_in_memory(workspace):
    (workspace / ".nbagent").mkdir()
    (workspace / ".nbagent" / "nbagent.db").write_bytes(b"garbage" * 500)
    state = open_state(AgentConfig.load(workspace=workspace))
    assert state.store is None and "cannot be read as a database" in state.problems[0]
    state.session.append([{"role": "user", "content": "still works"}])
    assert (workspace / ".nbagent" / "nbagent.db").read_bytes() == b"garbage" * 500


def test_describe_model_prefers_the_endpoint_for_pricing():
    class Remote:
        name, provider, base_url = "gpt-4o", "openai-chat", "https://openrouter.ai/api/v1"

    assert describe_model(Remote()) == ("https://openrouter.ai/api/v1", "gpt-4o")
    assert describe_model(ScriptedModel(name="m")) == ("scripted", "m")


@pytest.mark.process
def test_agent_todos_reach_the_next_step_and_resume_sends_the_exact_history(workspace):
    todos = [{"content": "inspect", "status": "in_progress"}]
    model = ScriptedModel([
        Reply(tool_calls=[Call("todo_write", {"todos": todos}, id="call_todo")], reasoning="plan first"),
        Reply(text="planned"),
    ])
    agent = Agent(workspace=workspace, model=model, origin="nb.ipynb", approval="auto")
    try:
        assert agent.run("make a plan", timeout=60).text == "planned"
        session_id = agent.session_id
        history = [dict(m) for m in agent.session.messages]
    finally:
        agent.close()
    # A change on step one is visible on step two, in the history (todo_write's result), while the
    # system prompt stays byte-identical (the provider's cached prefix).
    assert "[~] inspect" in model.requests[1].messages[-1]["content"]
    assert model.requests[1].system == model.requests[0].system

    resumed_model = ScriptedModel([Reply(text="resumed")])
    resumed = Agent(workspace=workspace, model=resumed_model, origin="nb.ipynb", session="continue")
    try:
        assert resumed.session_id == session_id and resumed.todos == todos
        resumed.run("go on", timeout=60)
    finally:
        resumed.close()
    sent = resumed_model.requests[0].messages
    # The unfinished list rides on the new prompt, after the history, which is sent exactly as stored.
    assert sent[:len(history)] == history
    assert sent[len(history)] == {"role": "user", "content": "go on\n\n<context>\nTask list (0/1 done):\n"
                                                            "[~] inspect\n</context>"}
    assert history[1]["tool_calls"][0]["id"] == "call_todo"
    with SessionStore(workspace) as store:
        info = store.info(session_id)
        assert (info.turns, info.title) == (2, "make a plan")
        assert [c["name"] for c in store.tool_calls(session_id)] == ["todo_write"]
