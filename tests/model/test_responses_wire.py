"""The Responses API through the real openai client against the scripted server."""

from __future__ import annotations

import json

from nbagent.testing.replies import Call, Reply, call


def stream_events(client, **kwargs):
    kwargs.setdefault("input", "hi")
    return list(client.responses.create(model="m", stream=True, **kwargs))


def test_event_sequence_of_reasoning_text_and_a_call(server, client):
    server.enqueue(Reply(reasoning="Plan it.", text="On it.", tool_calls=[call("ls", path=".")]))
    events = stream_events(client)
    types = [e.type for e in events]
    assert types[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert types[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    # each output item opens and closes before the next one starts
    added = [e.item.type for e in events if e.type == "response.output_item.added"]
    done = [e.item.type for e in events if e.type == "response.output_item.done"]
    assert added == done == ["reasoning", "message", "function_call"]
    summary = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert (summary, text) == ("Plan it.", "On it.")
    server.assert_complete()


def test_function_call_items_have_item_ids_call_ids_and_argument_deltas(server, client):
    server.enqueue(Reply(tool_calls=[call("read_file", path="a.py"), Call("pwd", {}, id="call_given")]))
    events = stream_events(client)
    items = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.id[:3] for i in items] == ["fc_", "fc_"]
    assert items[0].call_id.startswith("call_") and items[1].call_id == "call_given"
    first = items[0].id
    arguments = "".join(
        e.delta for e in events
        if e.type == "response.function_call_arguments.delta" and e.item_id == first
    )
    assert json.loads(arguments) == {"path": "a.py"}
    added = next(e for e in events if e.type == "response.output_item.added")
    assert (added.item.name, added.item.arguments) == ("read_file", "")


def test_reasoning_item_carries_encrypted_content_only_when_included(server, client):
    server.enqueue(Reply(reasoning="why", text="a"), Reply(reasoning="why", text="b"))
    asked = stream_events(client, include=["reasoning.encrypted_content"], store=False)
    plain = stream_events(client)
    item = next(e.item for e in asked if e.type == "response.output_item.done")
    assert item.type == "reasoning" and item.id.startswith("rs_")
    assert item.summary[0].text == "why" and item.encrypted_content
    assert next(e.item for e in plain if e.type == "response.output_item.done").encrypted_content is None


def test_usage_arrives_with_response_completed(server, client):
    server.enqueue(Reply(text="ok", input_tokens=300, output_tokens=12), "no usage")
    usage = stream_events(client)[-1].response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (300, 12, 312)
    assert usage.input_tokens_details.cached_tokens == 0
    server.configure(usage=False)
    assert stream_events(client)[-1].response.usage is None


def test_reasoning_items_sent_back_are_recorded(server, client):
    server.enqueue(Reply(reasoning="think", tool_calls=[call("ls")]), "Done.")
    first = stream_events(client, include=["reasoning.encrypted_content"], store=False)
    output = [i.model_dump(exclude_none=True) for i in first[-1].response.output]
    reasoning, fc = output
    follow_up = ["hi", *output, {"type": "function_call_output", "call_id": fc["call_id"], "output": "a.py"}]
    stream_events(client, input=follow_up, include=["reasoning.encrypted_content"], store=False)
    sent = server.last.body["input"]
    assert sent[1]["type"] == "reasoning" and sent[1]["id"] == reasoning["id"]
    assert sent[1]["encrypted_content"] == reasoning["encrypted_content"]
    assert sent[3] == {"type": "function_call_output", "call_id": fc["call_id"], "output": "a.py"}
    assert server.last.api == "responses"


def test_truncated_reply_ends_with_response_incomplete(server, client):
    server.enqueue(Reply(text="cut sh", finish_reason="length"))
    last = stream_events(client)[-1]
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details.reason == "max_output_tokens"


def test_non_streamed_response(server, client):
    server.enqueue(Reply(reasoning="r", text="Hello.", tool_calls=[call("ls", path=".")]))
    response = client.responses.create(model="m", input="hi")
    assert response.output_text == "Hello."
    assert [i.type for i in response.output] == ["reasoning", "message", "function_call"]
    assert json.loads(response.output[2].arguments) == {"path": "."}
    assert response.status == "completed" and response.usage.output_tokens > 0


async def test_async_client_streams_responses(server, aclient):
    server.enqueue(Reply(text="async text"))
    text = ""
    async for event in await aclient.responses.create(model="m", input="hi", stream=True):
        if event.type == "response.output_text.delta":
            text += event.delta
    assert text == "async text"
