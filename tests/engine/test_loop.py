"""The turn loop through the public Agent API, on the in-process scripted model."""

from __future__ import annotations

import json
import threading
import time

import pytest

from nbagent import events as ev
from nbagent.testing.replies import Call, Reply, Slow
from nbagent.testing.scripted import ScriptedModel

pytestmark = pytest.mark.process


def slow_lookup(key: str) -> str:
    """Look a key up slowly (0.3 s), for concurrency tests.

    Args:
        key: what to look up
    """
    time.sleep(0.3)
    return f"value of {key}"


def boom(reason: str) -> str:
    """Always fails.

    Args:
        reason: why
    """
    raise RuntimeError(f"exploded: {reason}")


def types_of(events):
    return [e.type for e in events]


def test_text_turn_streams_and_returns_result(make_agent):
    agent = make_agent(Reply(text="Hello from the model, in several chunks.", reasoning="thinking hard"))
    result = agent.run("hi")
    assert result.text == "Hello from the model, in several chunks."
    assert result.reason == "done"
    kinds = types_of(result.events)
    assert kinds[0] == "turn_start" and kinds[-1] == "turn_end"
    assert kinds.index("reasoning_delta") < kinds.index("text_delta")
    deltas = [e.text for e in result.events if isinstance(e, ev.TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == result.text
    assert result.usage["output_tokens"] > 0


def test_events_are_json_serialisable_and_round_trip(make_agent):
    agent = make_agent(Reply(text="ok", tool_calls=[Call("glob", {"pattern": "*.py"})]), "done")
    result = agent.run("go")
    for event in result.events:
        data = json.loads(json.dumps(event.to_dict()))
        assert ev.event_from_dict(data) == event


def test_tool_input_start_comes_before_tool_call_and_result(make_agent):
    agent = make_agent(Reply(tool_calls=[Call("glob", {"pattern": "*"})]), "done")
    kinds = types_of(agent.run("list").events)
    assert kinds.index("tool_input_start") < kinds.index("tool_input_delta") < kinds.index("tool_call")
    assert kinds.index("tool_call") < kinds.index("tool_result")


def test_read_only_calls_run_concurrently(make_agent):
    fn = slow_lookup
    agent = make_agent(Reply(tool_calls=[Call("slow_lookup", {"key": k}) for k in "abc"]), "done",
                       tools=[_read_only(fn)])
    started = time.perf_counter()
    result = agent.run("look up three keys")
    elapsed = time.perf_counter() - started
    assert [c["output"] for c in result.tool_calls] == ["value of a", "value of b", "value of c"]
    assert elapsed < 0.75, f"three 0.3 s read-only calls took {elapsed:.2f} s: not concurrent"


def test_calls_that_change_things_run_in_order(make_agent, tmp_path):
    order = []

    def record(tag: str) -> str:
        """Record a tag (changes state, so it asks and runs in order).

        Args:
            tag: the tag
        """
        order.append(tag)
        time.sleep(0.05)
        return tag

    agent = make_agent(Reply(tool_calls=[Call("record", {"tag": t}) for t in "xyz"]), "done",
                       tools=[record], approval="auto")
    agent.run("go")
    assert order == ["x", "y", "z"]


def test_a_tool_that_raises_becomes_an_error_result_and_the_loop_goes_on(make_agent):
    model = ScriptedModel([Reply(tool_calls=[Call("boom", {"reason": "test"})]), "recovered"])
    agent = make_agent(model=model, tools=[_read_only(boom)])
    result = agent.run("try")
    assert result.text == "recovered"
    (call,) = result.tool_calls
    assert call["is_error"] and call["status"] == "failed"
    assert "RuntimeError: exploded: test" in call["output"]
    tool_message = model.requests[1].messages[-1]
    assert tool_message["role"] == "tool" and "exploded" in tool_message["content"]


def test_malformed_arguments_become_a_tool_error_the_model_can_fix(make_agent):
    model = ScriptedModel([Reply(tool_calls=[Call("glob", '{"pattern": "*.py"')]),
                           Reply(tool_calls=[Call("glob", {"pattern": "*.py"})]), "fixed"])
    agent = make_agent(model=model)
    result = agent.run("find python files")
    assert result.reason == "done"
    first, second = result.tool_calls
    assert first["is_error"] and "not valid JSON" in first["output"]
    assert not second["is_error"]


def test_unknown_tool_and_bad_argument_types_are_reported(make_agent):
    model = ScriptedModel([Reply(tool_calls=[Call("no_such_tool", {}), Call("read_file", {"path": 3})]), "ok"])
    result = make_agent(model=model).run("x")
    unknown, bad = result.tool_calls
    assert "unknown tool 'no_such_tool'" in unknown["output"]
    assert "invalid arguments for read_file" in bad["output"]


def test_max_steps_ends_the_turn(make_agent):
    loop_forever = Reply(tool_calls=[Call("glob", {"pattern": "*"})])
    model = ScriptedModel(default=loop_forever)
    result = make_agent(model=model, max_steps=3).run("spin")
    assert result.reason == "max_steps"
    assert len(model.requests) == 3


def test_queued_prompts_run_in_order(make_agent):
    model = ScriptedModel([Slow(0.02, Reply(text="first answer")), "second answer", "third answer"])
    agent = make_agent(model=model)
    seen = []
    agent.subscribe(lambda e: seen.append(e) if isinstance(e, ev.PromptQueued) else None)
    futures = [agent.submit(p) for p in ("one", "two", "three")]
    results = [f.result(10) for f in futures]
    assert [r.text for r in results] == ["first answer", "second answer", "third answer"]
    assert [m.messages[-1]["content"] for m in model.requests] == ["one", "two", "three"]
    assert [e.prompt for e in seen] == ["two", "three"]


def test_abort_ends_the_turn_at_once_clears_the_queue_and_keeps_what_was_said(make_agent):
    model = ScriptedModel([Slow(0.05, Reply(text="a long answer " * 20)), "never"], chunk_size=4)
    agent = make_agent(model=model)
    first_delta = threading.Event()
    said = []
    agent.subscribe(lambda e: (said.append(e.text), first_delta.set()) if isinstance(e, ev.TextDelta) else None)
    running, queued = agent.submit("long"), agent.submit("queued")
    assert first_delta.wait(5)
    started = time.perf_counter()
    agent.abort()
    result = running.result(5)
    assert time.perf_counter() - started < 1.0
    assert result.reason == "aborted"
    assert queued.result(5).reason == "aborted"
    assert len(model.requests) == 1
    kept = agent.session.messages[-1]
    assert kept == {"role": "assistant", "content": "".join(said)}
    assert agent.wait(2)


def test_the_agent_is_usable_after_an_abort(make_agent):
    model = ScriptedModel([Slow(0.05, Reply(text="x" * 200)), "fresh"], chunk_size=2)
    agent = make_agent(model=model)
    streaming = threading.Event()
    agent.subscribe(lambda e: streaming.set() if isinstance(e, ev.TextDelta) else None)
    future = agent.submit("slow")
    assert streaming.wait(10)
    agent.abort()
    assert future.result(5).reason == "aborted"
    assert agent.run("again").text == "fresh"


def test_model_failure_is_an_error_event_then_turn_end_error(make_agent):
    from nbagent.testing.replies import Fail

    result = make_agent(Fail(401, "bad key")).run("x")
    assert result.reason == "error"
    (error,) = [e for e in result.events if isinstance(e, ev.Error)]
    assert error.kind == "auth"


def test_stream_yields_events_until_turn_end(make_agent):
    agent = make_agent("streamed")
    events = list(agent.stream("go"))
    assert events[0].type == "turn_start" and events[-1].type == "turn_end"
    assert "".join(e.text for e in events if e.type == "text_delta") == "streamed"


async def test_arun(make_agent):
    agent = make_agent("async answer")
    result = await agent.arun("go")
    assert result.text == "async answer"


def _read_only(fn):
    from nbagent import function_tool

    return function_tool(fn, read_only=True)


def test_a_turn_that_fails_at_its_first_request_still_keeps_its_prompt(make_agent, agent_workspace):
    """The turn's start (its count, the prompt, the prompt history) is written while the first request is
    on its way; a request that fails still leaves all three stored, in the turn's end."""
    from nbagent.store.sessions import SessionStore
    from nbagent.testing.replies import Fail

    agent = make_agent(Fail(500, "the model is down"))
    result = agent.run("summarise the sales")
    assert result.reason == "error"
    stored = SessionStore(agent_workspace).load(agent.session_id)
    assert stored.turns == 1 and stored.messages[0]["content"].startswith("summarise the sales")
    assert agent.runtime.state.prompts()[-1] == "summarise the sales"
