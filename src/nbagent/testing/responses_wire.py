"""A scripted Reply as Responses-API wire data.

The typed SSE events of a streamed response, or one `response` object, shaped like OpenAI's.

Output items come in order: a reasoning item (when the reply has reasoning), a message item (when it
has text), then one function_call item per tool call. Reasoning items carry `encrypted_content` only
when the request asked for it with include=["reasoning.encrypted_content"], as OpenAI does.
"""

from __future__ import annotations

import base64
import os
from typing import Any, Callable

from nbagent.testing.replies import Call, Reply
from nbagent.testing.wire_common import (
    SSE,
    WireOptions,
    cached_count,
    calls_with_ids,
    finish_reason,
    new_id,
    now,
    pieces,
    usage_counts,
)


class _Events:
    """Collects events, numbering them with `sequence_number` as the API does."""

    def __init__(self) -> None:
        self.events: list[SSE] = []

    def emit(self, type_: str, **fields: Any) -> None:
        payload = {"type": type_, "sequence_number": len(self.events), **fields}
        self.events.append(SSE(payload, event=type_))


def responses_stream(reply: Reply, body: dict[str, Any], opts: WireOptions,
                     cached: Callable[[], int] | None = None) -> list[SSE]:
    """response.created, response.in_progress, the events of each output item, then
    response.completed (or response.incomplete when the reply's finish_reason is "length")."""
    out = _Events()
    response = _response_shell(body, opts)
    out.emit("response.created", response=response)
    out.emit("response.in_progress", response=response)
    items = []
    for index, (kind, part) in enumerate(_planned_items(reply)):
        item = _stream_item(out, index, kind, part, body, opts.chunk_size)
        items.append(item)
    final = _finish(response, reply, body, opts, items, cached)
    out.emit(f"response.{final['status']}", response=final)
    return out.events


def responses_object(reply: Reply, body: dict[str, Any], opts: WireOptions,
                     cached: Callable[[], int] | None = None) -> dict[str, Any]:
    """The `response` object of a non-streamed answer."""
    items = [_done_item(kind, part, body) for kind, part in _planned_items(reply)]
    return _finish(_response_shell(body, opts), reply, body, opts, items, cached)


def _planned_items(reply: Reply) -> list[tuple[str, Any]]:
    plan: list[tuple[str, Any]] = []
    if reply.reasoning:
        plan.append(("reasoning", reply.reasoning))
    if reply.text:
        plan.append(("message", reply.text))
    plan += [("function_call", pair) for pair in calls_with_ids(reply)]
    return plan


def _done_item(kind: str, part: Any, body: dict[str, Any]) -> dict[str, Any]:
    if kind == "reasoning":
        return _reasoning_item(new_id("rs_"), part, body)
    if kind == "message":
        return _message_item(new_id("msg_"), part, "completed")
    call, call_id = part
    return _function_call_item(new_id("fc_"), call, call_id, call.arguments_json(), "completed")


def _stream_item(
    out: _Events, index: int, kind: str, part: Any, body: dict[str, Any], size: int
) -> dict[str, Any]:
    """Emit one output item's events, from output_item.added to output_item.done; return the item."""
    if kind == "reasoning":
        return _stream_reasoning(out, index, part, body, size)
    if kind == "message":
        return _stream_message(out, index, part, size)
    call, call_id = part
    return _stream_function_call(out, index, call, call_id, size)


def _stream_reasoning(out: _Events, index: int, text: str, body: dict[str, Any], size: int) -> dict:
    item_id = new_id("rs_")
    where = {"item_id": item_id, "output_index": index, "summary_index": 0}
    out.emit("response.output_item.added", output_index=index,
             item={"id": item_id, "type": "reasoning", "summary": []})
    out.emit("response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""})
    for piece in pieces(text, size):
        out.emit("response.reasoning_summary_text.delta", **where, delta=piece)
    out.emit("response.reasoning_summary_text.done", **where, text=text)
    out.emit("response.reasoning_summary_part.done", **where, part={"type": "summary_text", "text": text})
    item = _reasoning_item(item_id, text, body)
    out.emit("response.output_item.done", output_index=index, item=item)
    return item


def _stream_message(out: _Events, index: int, text: str, size: int) -> dict[str, Any]:
    item_id = new_id("msg_")
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    out.emit("response.output_item.added", output_index=index,
             item=_message_item(item_id, "", "in_progress", with_content=False))
    out.emit("response.content_part.added", **where, part=_output_text(""))
    for piece in pieces(text, size):
        out.emit("response.output_text.delta", **where, delta=piece, logprobs=[])
    out.emit("response.output_text.done", **where, text=text, logprobs=[])
    out.emit("response.content_part.done", **where, part=_output_text(text))
    item = _message_item(item_id, text, "completed")
    out.emit("response.output_item.done", output_index=index, item=item)
    return item


def _stream_function_call(out: _Events, index: int, call: Call, call_id: str, size: int) -> dict:
    item_id = new_id("fc_")
    arguments = call.arguments_json()
    out.emit("response.output_item.added", output_index=index,
             item=_function_call_item(item_id, call, call_id, "", "in_progress"))
    for piece in pieces(arguments, size):
        out.emit("response.function_call_arguments.delta", item_id=item_id, output_index=index,
                 delta=piece)
    out.emit("response.function_call_arguments.done", item_id=item_id, output_index=index,
             name=call.name, arguments=arguments)
    item = _function_call_item(item_id, call, call_id, arguments, "completed")
    out.emit("response.output_item.done", output_index=index, item=item)
    return item


def _reasoning_item(item_id: str, text: str, body: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": item_id,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text}],
    }
    if "reasoning.encrypted_content" in (body.get("include") or []):
        # Opaque to the client: it must only keep it and send it back.
        item["encrypted_content"] = "gAAAAA" + base64.urlsafe_b64encode(os.urandom(48)).decode()
    return item


def _message_item(item_id: str, text: str, status: str, with_content: bool = True) -> dict:
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [_output_text(text)] if with_content else [],
    }


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _function_call_item(item_id: str, call: Call, call_id: str, arguments: str, status: str) -> dict:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": call.name,
    }


def _response_shell(body: dict[str, Any], opts: WireOptions) -> dict[str, Any]:
    """The response object as response.created shows it: in progress, no output yet."""
    return {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": now(),
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model") or opts.model,
        "output": [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": None,
        "metadata": body.get("metadata") or {},
    }


def _finish(
    shell: dict[str, Any], reply: Reply, body: dict[str, Any], opts: WireOptions, items: list[dict],
    cached: Callable[[], int] | None = None,
) -> dict[str, Any]:
    truncated = finish_reason(reply) == "length"
    final = {**shell, "output": items, "status": "incomplete" if truncated else "completed"}
    final["completed_at"] = None if truncated else now()
    if truncated:
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    if opts.usage:
        final["usage"] = responses_usage(reply, body, cached)
    return final


def responses_usage(reply: Reply, body: dict[str, Any], cached: Callable[[], int] | None = None) -> dict[str, Any]:
    prompt = [body.get("instructions"), body.get("input"), body.get("tools")]
    input_tokens, output_tokens, reasoning_tokens = usage_counts(reply, prompt)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached_count(reply, input_tokens, cached), "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }
