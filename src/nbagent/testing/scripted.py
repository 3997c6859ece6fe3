"""ScriptedModel: an in-process model that plays back a queue of replies and records what it got.

For fast unit tests and deterministic notebooks: no network, no server. The
replies are the same vocabulary the HTTP ScriptedServer takes (Reply, Call,
Fail, ...), so a test can move between the two.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from typing import Any, AsyncIterator, Iterable, cast

from ..errors import ModelError
from ..model.base import (
    ModelChunk, ModelRequest, ReasoningChunk, ResponseDone, TextChunk, ToolCallArgs, ToolCallBegin, UsageInfo,
)
from .replies import BreakStream, Call, Fail, Reply, Slow, Stall, as_scripted

_FAIL_KINDS = {401: "auth", 403: "auth", 404: "not_found", 429: "rate_limit", 400: "context_overflow"}
_ids = itertools.count(1)


class ScriptedModel:
    """Plays ``replies`` in order. A callable reply is called with the request and returns a Reply.

    ``requests`` holds every ModelRequest received; ``assert_complete()``
    fails if replies are left over. ``chunk_size`` splits text into deltas;
    ``delay`` (seconds) sleeps between chunks to script a slow stream.
    """

    provider = "scripted"

    def __init__(self, replies: Iterable[Any] = (), *, name: str = "scripted", chunk_size: int = 8,
                 delay: float = 0.0, default: Reply | None = None):
        self.name = name
        self.replies: deque[Any] = deque(replies)
        self.requests: list[ModelRequest] = []
        self.chunk_size = chunk_size
        self.delay = delay
        self.default = default

    def enqueue(self, *replies: Any) -> "ScriptedModel":
        self.replies.extend(replies)
        return self

    def assert_complete(self) -> None:
        if self.replies:
            raise AssertionError(f"{len(self.replies)} scripted replies were never requested")

    async def aclose(self) -> None:
        pass

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.requests.append(request)
        # About four characters a token, like the HTTP double, so counters move in demos.
        self._input_estimate = self._estimate(request)
        reply = self._next(request)
        if isinstance(reply, Fail):
            raise ModelError(reply.message or f"scripted failure {reply.status}",
                             kind=_FAIL_KINDS.get(reply.status, "server"), status_code=reply.status)
        if isinstance(reply, Stall):
            await asyncio.sleep(reply.seconds)
            raise ModelError("the model request timed out", kind="timeout")
        cut = reply.after_chunks if isinstance(reply, BreakStream) else None
        delay = reply.delay_per_chunk if isinstance(reply, Slow) else self.delay
        reply = reply.reply if isinstance(reply, (BreakStream, Slow)) else reply
        for i, chunk in enumerate(self._chunks(reply)):
            if cut is not None and i >= cut:
                raise ModelError("the model stream broke off mid-way", kind="stream_broken")
            if delay:
                await asyncio.sleep(delay)
            yield chunk

    _counted: tuple[int, int, Any] = (0, 0, None)
    """(messages, their characters, the last of them) of the last request: the next one repeats them."""

    def _estimate(self, request: ModelRequest) -> int:
        # The loop sends the same message objects again at every step, with the new ones after them:
        # only those are counted (benches subtract this double's time from a step, bench/overhead.py,
        # and a sum over the whole history made that noisier the longer the history).
        messages = request.messages
        known, chars, last = self._counted
        if not (0 < known <= len(messages) and messages[known - 1] is last):
            known, chars = 0, 0
        chars += sum(len(m.get("content") or "") for m in messages[known:])
        self._counted = (len(messages), chars, messages[-1] if messages else None)
        return (len(request.system) + chars) // 4

    def _next(self, request: ModelRequest) -> Any:
        if not self.replies:
            if self.default is not None:
                return self.default
            raise ModelError("the scripted model has no replies left", kind="server")
        reply = self.replies.popleft()
        if callable(reply):
            reply = reply(request)
        return as_scripted(cast(Any, reply))

    def _chunks(self, reply: Reply) -> Iterable[ModelChunk]:
        size = self.chunk_size
        for i in range(0, len(reply.reasoning), size):
            yield ReasoningChunk(reply.reasoning[i:i + size])
        for i in range(0, len(reply.text), size):
            yield TextChunk(reply.text[i:i + size])
        calls = [_assemble(index, call) for index, call in enumerate(reply.tool_calls)]
        for index, (call, raw) in enumerate(calls):
            yield ToolCallBegin(index=index, call_id=call["id"], name=call["name"])
            if raw:
                yield ToolCallArgs(index=index, text=raw)
        yield UsageInfo(input_tokens=reply.input_tokens if reply.input_tokens is not None else self._input_estimate,
                        output_tokens=reply.output_tokens if reply.output_tokens is not None
                        else (len(reply.text) + len(reply.reasoning) + sum(len(r) for _, r in calls)) // 4)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning:
            message["reasoning"] = reply.reasoning
        if calls:
            message["tool_calls"] = [c for c, _ in calls]
        yield ResponseDone(message=message, finish_reason="tool_calls" if calls else "stop")


def _assemble(index: int, call: Call) -> tuple[dict[str, Any], str]:
    raw = call.arguments_json()
    call_id = call.id or f"call_{next(_ids):06d}"
    return {"id": call_id, "name": call.name, "arguments": raw}, raw
