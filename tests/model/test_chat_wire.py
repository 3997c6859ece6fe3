"""Chat Completions through the real openai client against the scripted server."""

from __future__ import annotations

import json

import pytest
from openai import OpenAI

from nbagent.testing.replies import Call, Reply, call, calls
from nbagent.testing.server import ScriptedServer

USER = [{"role": "user", "content": "hi"}]


def stream(client: OpenAI, **kwargs):
    return list(client.chat.completions.create(model="m", messages=USER, stream=True, **kwargs))


def test_streamed_text_arrives_in_chunks(server, client):
    server.enqueue(Reply(text="Hello from the scripted server."))
    chunks = stream(client)
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(deltas) == "Hello from the scripted server."
    assert len(deltas) == 8  # chunk_size=4
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    server.assert_complete()


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_deltas_come_before_text_in_the_named_field(field):
    with ScriptedServer(Reply(text="42", reasoning="Let me think."), reasoning_field=field) as server:
        with OpenAI(base_url=server.url, api_key="k", max_retries=0) as client:
            chunks = stream(client)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    reasoning = "".join(getattr(d, field, None) or "" for d in deltas)
    assert reasoning == "Let me think."
    first_reasoning = next(i for i, d in enumerate(deltas) if getattr(d, field, None))
    first_text = next(i for i, d in enumerate(deltas) if d.content)
    assert first_reasoning < first_text
    other = "reasoning" if field == "reasoning_content" else "reasoning_content"
    assert not any(getattr(d, other, None) for d in deltas)


@pytest.mark.parametrize("llama", [False, True])
def test_parallel_tool_calls_interleave_and_assemble_by_index(llama, assemble):
    grep = Call("grep", {"pattern": "def main"}, id="call_fixed")
    reply = calls(call("read_file", path="src/app.py"), grep)
    with ScriptedServer(reply, chunk_size=5, llama_cpp_style=llama) as server:
        with OpenAI(base_url=server.url, api_key="k", max_retries=0) as client:
            chunks = stream(client)
    deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    order = [d.index for d in deltas]
    assert order.index(1) < len(order) - 1 - order[::-1].index(0)  # call 1 starts before call 0 ends
    assembled = assemble(deltas)
    assert [assembled[i]["name"] for i in (0, 1)] == ["read_file", "grep"]
    assert json.loads(assembled[0]["arguments"]) == {"path": "src/app.py"}
    assert json.loads(assembled[1]["arguments"]) == {"pattern": "def main"}
    assert assembled[0]["id"].startswith("call_") and assembled[1]["id"] == "call_fixed"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    repeated = [d for d in deltas if d.function.arguments and d.function.name]
    assert bool(repeated) == llama  # llama.cpp repeats the name with every argument piece


def test_llama_cpp_style_breaks_naive_name_concatenation():
    with ScriptedServer(calls(call("ls", path=".")), chunk_size=3, llama_cpp_style=True) as server:
        with OpenAI(base_url=server.url, api_key="k", max_retries=0) as client:
            chunks = stream(client)
    names = [d.function.name for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    assert "".join(names) != "ls" and set(names) == {"ls"}


def test_invalid_json_arguments_are_sent_verbatim(server, client, assemble):
    server.enqueue(calls(Call("edit", '{"path": "a.py", "old": ')))
    chunks = stream(client)
    deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    assert assemble(deltas)[0]["arguments"] == '{"path": "a.py", "old": '


def test_usage_chunk_comes_last_when_asked_for(server, client):
    server.enqueue(Reply(text="ok", input_tokens=120, output_tokens=7))
    chunks = stream(client, stream_options={"include_usage": True})
    assert chunks[-1].choices == []
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (120, 7)
    assert all(c.usage is None for c in chunks[:-1])


def test_usage_is_estimated_when_not_scripted(server, client):
    server.enqueue(Reply(text="a longer answer than most", reasoning="some thought"))
    usage = stream(client, stream_options={"include_usage": True})[-1].usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.completion_tokens_details.reasoning_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_no_usage_unless_asked_or_when_the_server_sends_none(server, client):
    server.enqueue("first", "second")
    assert all(c.usage is None for c in stream(client))
    server.configure(usage=False)
    assert all(c.usage is None for c in stream(client, stream_options={"include_usage": True}))
    server.assert_complete()


def test_non_streamed_completion_carries_everything(server, client):
    server.enqueue(Reply(text="Done.", reasoning="hm", tool_calls=[call("ls", path=".")]))
    completion = client.chat.completions.create(model="m", messages=USER)
    message = completion.choices[0].message
    assert message.content == "Done." and message.reasoning_content == "hm"
    assert message.tool_calls[0].function.name == "ls"
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "."}
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage.total_tokens > 0


def test_finish_reason_length_can_be_scripted(server, client):
    server.enqueue(Reply(text="cut", finish_reason="length"))
    assert stream(client)[-1].choices[0].finish_reason == "length"


async def test_async_client_streams_text_and_tools(server, aclient, assemble):
    server.enqueue(Reply(text="Looking.", tool_calls=[call("ls", path="."), call("pwd")]))
    text, deltas = "", []
    async for chunk in await aclient.chat.completions.create(model="m", messages=USER, stream=True):
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            deltas += chunk.choices[0].delta.tool_calls or []
    assembled = assemble(deltas)
    assert text == "Looking."
    assert [(c["name"], json.loads(c["arguments"])) for c in assembled.values()] == [
        ("ls", {"path": "."}), ("pwd", {})]
