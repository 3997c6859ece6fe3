"""A scripted Reply as fill-in-the-middle wire data: OpenAI-style /v1/completions and llama.cpp's /infill.

``/v1/completions`` (OpenAI's legacy endpoint; Ollama's takes ``suffix`` too): ``text_completion``
chunks whose choices carry ``text``, a usage chunk at the end when the client asked with
stream_options.include_usage, then ``[DONE]``. ``/infill`` (llama.cpp's server): ``{"content",
"stop": false}`` events, then one with ``"stop": true`` and the token counts (``tokens_evaluated``,
``tokens_predicted``), no ``[DONE]``, as that server streams it.
"""

from __future__ import annotations

from typing import Any

from nbagent.testing.replies import Reply
from nbagent.testing.wire_common import SSE, WireOptions, new_id, now, pieces, usage_counts


def _counts(reply: Reply, body: dict[str, Any]) -> tuple[int, int]:
    prompt = [body.get("prompt"), body.get("suffix"), body.get("input_prefix"), body.get("input_suffix"),
              body.get("input_extra")]
    input_tokens, output_tokens, _ = usage_counts(reply, prompt)
    return input_tokens, output_tokens


def completions_stream(reply: Reply, body: dict[str, Any], opts: WireOptions) -> list[SSE]:
    include_usage = opts.usage and bool((body.get("stream_options") or {}).get("include_usage"))
    base = {"id": new_id("cmpl-"), "object": "text_completion", "created": now(),
            "model": body.get("model") or opts.model}

    def chunk(text: str, finish: str | None = None) -> SSE:
        return SSE({**base, "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}]})

    events = [chunk(p) for p in pieces(reply.text, opts.chunk_size)]
    events.append(chunk("", "stop"))
    if include_usage:
        events.append(SSE({**base, "choices": [], "usage": _usage(reply, body)}))
    events.append(SSE("[DONE]"))
    return events


def completions_object(reply: Reply, body: dict[str, Any], opts: WireOptions) -> dict[str, Any]:
    answer = {"id": new_id("cmpl-"), "object": "text_completion", "created": now(),
              "model": body.get("model") or opts.model,
              "choices": [{"index": 0, "text": reply.text, "logprobs": None, "finish_reason": "stop"}]}
    if opts.usage:
        answer["usage"] = _usage(reply, body)
    return answer


def _usage(reply: Reply, body: dict[str, Any]) -> dict[str, int]:
    input_tokens, output_tokens = _counts(reply, body)
    return {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens}


def infill_stream(reply: Reply, body: dict[str, Any], opts: WireOptions) -> list[SSE]:
    events = [SSE({"content": p, "stop": False}) for p in pieces(reply.text, opts.chunk_size)]
    events.append(SSE(infill_object(Reply(""), body, opts) | _counts_of(reply, body)))
    return events


def infill_object(reply: Reply, body: dict[str, Any], opts: WireOptions) -> dict[str, Any]:
    return {"content": reply.text, "stop": True, "model": opts.model, **_counts_of(reply, body)}


def _counts_of(reply: Reply, body: dict[str, Any]) -> dict[str, int]:
    input_tokens, output_tokens = _counts(reply, body)
    return {"tokens_evaluated": input_tokens, "tokens_predicted": output_tokens}
