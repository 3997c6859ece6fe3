"""A scripted Reply as Chat Completions wire data.

`chat.completion.chunk` SSE events or one `chat.completion` object, shaped like OpenAI's (and, on request, like llama.cpp's)."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Callable

from nbagent.testing.replies import Reply
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


def chat_stream(reply: Reply, body: dict[str, Any], opts: WireOptions,
                cached: Callable[[], int] | None = None) -> list[SSE]:
    """The SSE events of a streamed answer, ending with `data: [DONE]`.

    Order: a role chunk, reasoning deltas, content deltas, tool-call deltas (interleaved by index
    when there are several), a finish chunk, then the usage chunk (`choices: []`) when the client
    asked for it with stream_options.include_usage and the server sends usage at all; it is counted when
    sent. ``cached``: the prompt cache's count for this request, when the reply scripts none.
    """
    include_usage = opts.usage and bool((body.get("stream_options") or {}).get("include_usage"))
    base = {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": now(),
        "model": body.get("model") or opts.model,
        "system_fingerprint": "fp_scripted",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> SSE:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        payload = {**base, "choices": [choice]}
        if include_usage:
            payload["usage"] = None  # OpenAI sends "usage": null on every chunk but the last
        return SSE(payload)

    size = opts.chunk_size
    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({opts.reasoning_field: p}) for p in pieces(reply.reasoning, size)]
    events += [chunk({"content": p}) for p in pieces(reply.text, size)]
    events += [chunk({"tool_calls": [d]}) for d in tool_call_deltas(reply, opts)]
    events.append(chunk({}, finish_reason(reply)))
    if include_usage:
        events.append(SSE(lambda: {**base, "choices": [], "usage": chat_usage(reply, body, cached)}))
    events.append(SSE("[DONE]"))
    return events


def tool_call_deltas(reply: Reply, opts: WireOptions) -> list[dict[str, Any]]:
    """The `delta.tool_calls[]` entries of every call, round-robin across calls.

    The first delta of a call carries its id, type and name with empty arguments; the rest carry
    only argument text, except in llama_cpp_style, where every delta repeats id, type and name (as
    llama.cpp's servers do), so a client that appends names instead of keeping the first breaks.
    """
    per_call = []
    for index, (call, call_id) in enumerate(calls_with_ids(reply)):
        head = {"index": index, "id": call_id, "type": "function"}
        first = {**head, "function": {"name": call.name, "arguments": ""}}
        deltas = [first]
        for piece in pieces(call.arguments_json(), opts.chunk_size):
            if opts.llama_cpp_style:
                deltas.append({**head, "function": {"name": call.name, "arguments": piece}})
            else:
                deltas.append({"index": index, "function": {"arguments": piece}})
        per_call.append(deltas)
    return [d for turn in zip_longest(*per_call) for d in turn if d is not None]


def chat_completion(reply: Reply, body: dict[str, Any], opts: WireOptions,
                    cached: Callable[[], int] | None = None) -> dict[str, Any]:
    """The `chat.completion` object of a non-streamed answer."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if reply.reasoning:
        message[opts.reasoning_field] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function",
             "function": {"name": call.name, "arguments": call.arguments_json()}}
            for call, call_id in calls_with_ids(reply)
        ]
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason(reply)}
    completion = {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": now(),
        "model": body.get("model") or opts.model,
        "system_fingerprint": "fp_scripted",
        "choices": [choice],
    }
    if opts.usage:
        completion["usage"] = chat_usage(reply, body, cached)
    return completion


def chat_usage(reply: Reply, body: dict[str, Any], cached: Callable[[], int] | None = None) -> dict[str, Any]:
    prompt = [body.get("messages"), body.get("tools")]
    input_tokens, output_tokens, reasoning_tokens = usage_counts(reply, prompt)
    return {
        "prompt_tokens": input_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_count(reply, input_tokens, cached), "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
