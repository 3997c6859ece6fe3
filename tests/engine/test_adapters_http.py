"""Both adapters through the real openai client against the scripted HTTP server."""

from __future__ import annotations

import json
import threading
import time

import pytest

from nbagent import events as ev
from nbagent.testing.replies import BreakStream, Call, Fail, Reply, Slow, Stall, context_overflow
from nbagent.testing.server import ScriptedServer

pytestmark = [pytest.mark.process, pytest.mark.integration]

APIS = ["chat", "responses"]


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


@pytest.fixture
def agent_for(server, tmp_path):
    made = []

    def make(api, **kwargs):
        from nbagent import Agent

        kwargs.setdefault("max_retries", 2)
        kwargs.setdefault("retry_base_delay", 0.01)
        kwargs.setdefault("model", "scripted-model")
        agent = Agent(workspace=tmp_path, base_url=server.url, api_key="sk-test",
                      api=api, **kwargs)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


@pytest.mark.parametrize("api", APIS)
def test_streamed_text_and_reasoning(agent_for, server, api):
    server.enqueue(Reply(text="The answer streams in pieces.", reasoning="Let me think about it."))
    result = agent_for(api).run("hello")
    assert result.text == "The answer streams in pieces."
    assert len([e for e in result.events if isinstance(e, ev.TextDelta)]) > 1
    assert "".join(e.text for e in result.events if isinstance(e, ev.ReasoningDelta)) == "Let me think about it."
    assert result.usage["input_tokens"] > 0
    server.assert_complete()


@pytest.mark.parametrize("api", APIS)
def test_parallel_tool_calls_are_assembled_and_answered(agent_for, server, tmp_path, api):
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "b.py").write_text("B = 2\n")
    server.enqueue(Reply(tool_calls=[Call("read_file", {"path": "a.py"}), Call("read_file", {"path": "b.py"})]),
                   "Both read.")
    result = agent_for(api).run("read both")
    assert [c["arguments"] for c in result.tool_calls] == [{"path": "a.py"}, {"path": "b.py"}]
    assert all(not c["is_error"] for c in result.tool_calls)
    body = server.model_requests()[-1].body
    if api == "chat":
        tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
        assert "A = 1" in tool_messages[0]["content"] and "B = 2" in tool_messages[1]["content"]
    else:
        outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
        assert len(outputs) == 2


def test_llama_cpp_style_repeated_id_and_name_are_not_appended(agent_for, server, tmp_path):
    (tmp_path / "x.txt").write_text("x\n")
    server.configure(llama_cpp_style=True, chunk_size=3)
    server.enqueue(Reply(tool_calls=[Call("read_file", {"path": "x.txt"})]), "ok")
    result = agent_for("chat").run("read")
    (call,) = result.tool_calls
    assert call["name"] == "read_file" and call["arguments"] == {"path": "x.txt"}
    sent = server.model_requests()[-1].body["messages"]
    assistant = [m for m in sent if m["role"] == "assistant"][0]
    assert assistant["tool_calls"][0]["function"]["name"] == "read_file"
    json.loads(assistant["tool_calls"][0]["function"]["arguments"])


def test_responses_reasoning_items_are_sent_back(agent_for, server, tmp_path):
    (tmp_path / "x.txt").write_text("x\n")
    server.enqueue(Reply(reasoning="I should read it.", tool_calls=[Call("read_file", {"path": "x.txt"})]),
                   "done")
    agent_for("responses").run("read")
    second = server.model_requests("responses")[-1].body["input"]
    reasoning = [i for i in second if i.get("type") == "reasoning"]
    assert reasoning and reasoning[0].get("encrypted_content")
    call_index = next(i for i, item in enumerate(second) if item.get("type") == "function_call")
    assert second.index(reasoning[0]) < call_index


def test_responses_reasoning_items_are_dropped_for_another_model(agent_for, server, tmp_path):
    (tmp_path / "x.txt").write_text("x\n")
    server.enqueue(Reply(reasoning="I should read it.", tool_calls=[Call("read_file", {"path": "x.txt"})]),
                   "done", "other")
    first = agent_for("responses", approval="auto")
    first.run("read")
    first.close()
    agent_for("responses", model="another-model", session=first.session_id).run("again")
    sent = server.model_requests("responses")[-1].body["input"]
    assert [i for i in sent if i.get("type") == "reasoning"] == []
    assert any(i.get("type") == "function_call" for i in sent)  # the calls and results stay


@pytest.mark.parametrize("api", APIS)
def test_no_usage_from_the_server_is_fine(agent_for, server, api):
    server.configure(usage=False)
    server.enqueue("no usage here")
    result = agent_for(api).run("x")
    assert result.reason == "done" and result.usage["input_tokens"] == 0


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("fail,kind", [
    (Fail(401), "auth"), (Fail(404), "not_found"), (context_overflow(), "context_overflow"),
])
def test_failures_become_an_error_event_then_turn_end_error(agent_for, server, api, fail, kind):
    server.enqueue(fail)
    result = agent_for(api).run("x")
    assert result.reason == "error"
    (error,) = [e for e in result.events if isinstance(e, ev.Error)]
    assert error.kind == kind
    if kind == "context_overflow":
        assert "8192" in error.message
    assert len(server.model_requests()) == 1  # not retried


@pytest.mark.parametrize("api", APIS)
def test_429_and_5xx_are_retried_with_backoff(agent_for, server, api):
    server.enqueue(Fail(429, retry_after=0.05), Fail(503), "finally")
    result = agent_for(api).run("x")
    assert result.text == "finally" and len(server.model_requests()) == 3


@pytest.mark.parametrize("api", APIS)
def test_retries_are_bounded(agent_for, server, api):
    server.enqueue(Fail(500), Fail(500), Fail(500))
    result = agent_for(api, max_retries=2).run("x")
    assert result.reason == "error"
    assert [e.kind for e in result.events if isinstance(e, ev.Error)] == ["server"]
    assert len(server.model_requests()) == 3


@pytest.mark.parametrize("api", APIS)
def test_a_stream_that_breaks_midway_keeps_what_was_said(agent_for, server, api):
    # Responses streams start with bookkeeping events (created, item added...) before any text.
    after = 4 if api == "chat" else 8
    server.enqueue(BreakStream(after_chunks=after, reply=Reply(text="This answer is cut off before it ends.")))
    agent = agent_for(api)
    result = agent.run("x")
    assert result.reason == "error"
    assert [e.kind for e in result.events if isinstance(e, ev.Error)] == ["stream_broken"]
    said = "".join(e.text for e in result.events if isinstance(e, ev.TextDelta))
    assert said and agent.session.messages[-1] == {"role": "assistant", "content": said}


@pytest.mark.parametrize("api", APIS)
def test_a_request_timeout_is_an_error(agent_for, server, api):
    server.enqueue(Stall(3.0))
    result = agent_for(api, request_timeout=0.5, max_retries=0).run("x")
    assert result.reason == "error"
    assert [e.kind for e in result.events if isinstance(e, ev.Error)] == ["timeout"]


@pytest.mark.parametrize("api", APIS)
def test_abort_mid_stream_closes_the_stream(agent_for, server, api):
    server.enqueue(Slow(0.05, Reply(text="word " * 100)))
    agent = agent_for(api)
    got_text = threading.Event()
    agent.subscribe(lambda e: got_text.set() if isinstance(e, ev.TextDelta) else None)
    future = agent.submit("long")
    assert got_text.wait(5)
    started = time.perf_counter()
    agent.abort()
    result = future.result(5)
    assert result.reason == "aborted" and time.perf_counter() - started < 1.0


@pytest.mark.parametrize("api", APIS)
def test_queue_order_over_http(agent_for, server, api):
    server.enqueue(Slow(0.01, Reply(text="one")), "two", "three")
    agent = agent_for(api)
    futures = [agent.submit(p) for p in ("p1", "p2", "p3")]
    assert [f.result(10).text for f in futures] == ["one", "two", "three"]
