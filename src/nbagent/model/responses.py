"""The Responses API over the openai SDK, streaming.

Reasoning items are kept whole (id, summary, encrypted content) and sent back
on the next request, since a function_call item without its reasoning item
is refused; their summary text streams as reasoning deltas. Requests are
stateless (store=False): the history goes with each request.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator

from ..errors import ModelError
from .base import (
    ModelChunk, ModelRequest, ReasoningChunk, ResponseDone, TextChunk, ToolCallArgs, ToolCallBegin, UsageInfo,
)
from .image_wire import responses_tool_output, responses_user_content
from .openai_common import guarded, make_client, split_heavy, takes_cache_key, with_retries
from .provider_data import mark_origin, origin_of, same_origin
from .wire_prefix import WirePrefix


class ResponsesModel:
    provider = "openai-responses"

    def __init__(self, config, client=None):
        self.config = config
        self.name = config.model
        self.base_url = config.base_url
        self.client = client or make_client(config)
        self._wire_prefix = WirePrefix()

    def set_name(self, name: str) -> None:
        self.name = name

    async def aclose(self) -> None:
        await self.client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        params = split_heavy(self._params(request))
        sdk_stream = await with_retries(lambda: self.client.responses.create(**params),
                                        config=self.config, model=self.name)
        state = _ResponseState(origin_of(self.base_url, self.name))
        async with contextlib.aclosing(guarded(sdk_stream, self.name, self.base_url)) as events:
            async for event in events:
                for out in state.feed(event):
                    yield out
        if not state.completed:
            raise ModelError("the model stream ended before response.completed", kind="stream_broken")
        for out in state.finish():
            yield out

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.name, "input": self._input(request), "stream": True, "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        if request.system:
            params["instructions"] = request.system
        if request.tools:
            params["tools"] = [{"type": "function", "name": t["name"], "description": t["description"],
                                "parameters": t["parameters"]} for t in request.tools]
            if request.tool_choice is not None:
                choice = request.tool_choice
                params["tool_choice"] = ({"type": "function", "name": choice["name"]}
                                         if isinstance(choice, dict) else choice)
        if request.reasoning_effort:
            params["reasoning"] = {"effort": request.reasoning_effort, "summary": "auto"}
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.max_tokens is not None:
            params["max_output_tokens"] = request.max_tokens
        if request.cache_key and takes_cache_key(self.base_url):
            params["prompt_cache_key"] = request.cache_key
        return params


    def _input(self, request: ModelRequest) -> list[dict[str, Any]]:
        origin = origin_of(self.base_url, self.name)
        return self._wire_prefix.convert(request.messages, lambda m: _items(m, origin), key=origin)


def to_input_items(messages: list[dict[str, Any]], origin: str = "") -> list[dict[str, Any]]:
    return [item for m in messages for item in _items(m, origin)]


def _items(m: dict[str, Any], origin: str) -> list[dict[str, Any]]:
    """One message's input items."""
    role = m["role"]
    if role == "tool":
        return [{"type": "function_call_output", "call_id": m["tool_call_id"], "output": responses_tool_output(m)}]
    if role == "assistant":
        return _assistant_items(m, origin)
    if role == "user":
        return [{"role": role, "content": responses_user_content(m)}]
    return [{"role": role, "content": m.get("content") or ""}]


def _assistant_items(m: dict[str, Any], origin: str = "") -> list[dict[str, Any]]:
    # Encrypted reasoning is only understood by the model that wrote it: dropped for another one.
    items = [dict(r) for r in m.get("reasoning_items") or ()] if same_origin(m, origin) else []
    if m.get("content"):
        items.append({"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": m["content"]}]})
    for c in m.get("tool_calls") or ():
        item = {"type": "function_call", "call_id": c["id"], "name": c["name"],
                "arguments": c.get("arguments") or "{}"}
        if c.get("item_id"):
            item["id"] = c["item_id"]
        items.append(item)
    return items


class _ResponseState:
    """Turns Responses stream events into chunks and assembles the assistant message."""

    def __init__(self, origin: str = ""):
        self.origin = origin
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_items: list[dict[str, Any]] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: UsageInfo | None = None
        self.completed = False
        self._last_reasoning_id: str | None = None

    def feed(self, event) -> list[ModelChunk]:
        kind = getattr(event, "type", "")
        handler = _HANDLERS.get(kind)
        return handler(self, event) if handler else []

    def _item_added(self, event) -> list[ModelChunk]:
        item = event.item
        if item.type == "reasoning":
            self._last_reasoning_id = item.id
        if item.type != "function_call":
            return []
        self.calls[event.output_index] = {"id": item.call_id, "name": item.name, "arguments": "",
                                          "item_id": item.id, "reasoning_id": self._last_reasoning_id}
        return [ToolCallBegin(index=event.output_index, call_id=item.call_id, name=item.name)]

    def _args_delta(self, event) -> list[ModelChunk]:
        call = self.calls.get(event.output_index)
        if call is not None:
            call["arguments"] += event.delta
        return [ToolCallArgs(index=event.output_index, text=event.delta)]

    def _text_delta(self, event) -> list[ModelChunk]:
        self.text.append(event.delta)
        return [TextChunk(event.delta)]

    def _reasoning_delta(self, event) -> list[ModelChunk]:
        self.reasoning.append(event.delta)
        return [ReasoningChunk(event.delta)]

    def _item_done(self, event) -> list[ModelChunk]:
        item = event.item
        if item.type == "reasoning":
            self.reasoning_items.append(item.model_dump(exclude_none=True, mode="json"))
        elif item.type == "function_call" and event.output_index in self.calls:
            self.calls[event.output_index]["arguments"] = item.arguments or ""
        return []

    def _completed(self, event) -> list[ModelChunk]:
        self.completed = True
        usage = getattr(event.response, "usage", None)
        if usage is not None:
            self.usage = responses_usage(usage)
        return []

    def _failed(self, event) -> list[ModelChunk]:
        error = getattr(getattr(event, "response", None), "error", None) or event
        message = getattr(error, "message", None) or "the response failed"
        raise ModelError(f"the model reported an error: {message}", kind="server")

    def finish(self) -> list[ModelChunk]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.reasoning:
            message["reasoning"] = "".join(self.reasoning)
        if self.reasoning_items:
            message["reasoning_items"] = self.reasoning_items
            mark_origin(message, self.origin)
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        out: list[ModelChunk] = [self.usage] if self.usage else []
        out.append(ResponseDone(message=message, finish_reason="tool_calls" if self.calls else "stop"))
        return out


def responses_usage(usage: Any) -> UsageInfo:
    """A Responses ``usage`` object; cached input tokens are ``input_tokens_details.cached_tokens``."""
    cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", None)
    reasoning = getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", None)
    return UsageInfo(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0,
                     cached_tokens=cached or 0, reasoning_tokens=reasoning or 0)


_HANDLERS = {
    "response.output_item.added": _ResponseState._item_added,
    "response.function_call_arguments.delta": _ResponseState._args_delta,
    "response.output_text.delta": _ResponseState._text_delta,
    "response.reasoning_summary_text.delta": _ResponseState._reasoning_delta,
    "response.reasoning_text.delta": _ResponseState._reasoning_delta,
    "response.output_item.done": _ResponseState._item_done,
    "response.completed": _ResponseState._completed,
    "response.failed": _ResponseState._failed,
    "error": _ResponseState._failed,
}
