"""Chat Completions over the openai SDK, streaming, with tools.

Tool calls are assembled by index: id and name are taken from the first
delta that carries them and only ``arguments`` is appended afterwards.
llama.cpp's server repeats id and name in every delta, which breaks naive
assembly (the SDK's own stream helper included). ``reasoning_content`` /
``reasoning`` deltas are read when a server sends them, and ``content`` may be a
list of typed parts (nbagent.model.parts). Fields the SDK does not know, on the
message and on each tool call, are kept and sent back to the same provider and
model (nbagent.model.provider_data).
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any, AsyncIterator

from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall

from .base import (
    ModelChunk, ModelRequest, ReasoningChunk, ResponseDone, TextChunk, ToolCallArgs, ToolCallBegin, UsageInfo,
)
from .openai_common import (
    guarded, make_client, open_chunk_stream, split_heavy, takes_cache_key, tool_param, with_retries,
)
from ..images.image import images_of
from .image_wire import chat_user_content, with_tool_images
from .parts import split_content
from .served_context import ServedContext, served_context
from .provider_data import attach, call_fields, merge_delta, message_fields, origin_of
from .wire_prefix import WirePrefix

_fallback_ids = itertools.count(1)


def _field_names(model: Any) -> frozenset[str]:
    fields = getattr(model, "model_fields", None) or getattr(model, "__fields__", {})
    return frozenset(fields)


# The fields the SDK's own types know: the rest of a delta (and of a tool call) is the provider's,
# kept and sent back to it, exactly as when the SDK built objects (their ``model_extra``).
DELTA_FIELDS = _field_names(ChoiceDelta)
TOOL_CALL_FIELDS = _field_names(ChoiceDeltaToolCall)


class ChatModel:
    provider = "openai-chat"

    def __init__(self, config, client=None, *, stream_with_tools: bool = True, offline: bool = False,
                 text_content: bool = False):
        self.config = config
        self.name = config.model
        self.base_url = config.base_url
        self.client = client or make_client(config)
        self.stream_with_tools = stream_with_tools
        """False for servers that cannot stream an automatic tool choice (llama-cpp-python's
        chatml-function-calling): requests with tools then go unstreamed, answers arrive whole."""
        self.text_content = text_content
        """True for servers whose schema wants a string ``content`` on every assistant message
        (llama-cpp-python's answers 500 to null beside tool_calls): "" is sent then."""
        self.offline = offline
        """The offline model (nbagent.model.local): the "auto" profile gives it the small one."""
        self._wire_prefix = WirePrefix()

    def set_name(self, name: str) -> None:
        self.name = name  # the wire form is keyed by the origin: provider fields go back to their own model only

    @property
    def origin(self) -> str:
        return origin_of(self.base_url, self.name)

    async def aclose(self) -> None:
        await self.client.close()

    async def served_context(self) -> ServedContext | None:
        """The context a local Ollama or llama.cpp server serves this model with (None: it does not say)."""
        return await served_context(self.client, self.base_url, self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        if request.tools and not self.stream_with_tools and request.stream:
            from dataclasses import replace

            request = replace(request, stream=False)
        params = split_heavy(self._params(request))
        if not request.stream:
            completion = await with_retries(lambda: self.client.chat.completions.create(**params),
                                            config=self.config, model=self.name)
            async for chunk in _from_completion(completion, self.origin):
                yield chunk
            return
        opened = await with_retries(lambda: open_chunk_stream(self.client, params), config=self.config,
                                    model=self.name)
        assembler = _Assembler(self.origin)
        async with contextlib.aclosing(guarded(opened, self.name, self.base_url)) as chunks:
            async for chunk in chunks:
                for out in assembler.feed(chunk):
                    yield out
        for out in assembler.finish():
            yield out

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.name, "messages": self._wire(request), "stream": request.stream}
        if request.stream:
            params["stream_options"] = {"include_usage": True}
        if request.tools:
            params["tools"] = [tool_param(t) for t in request.tools]
            if request.tool_choice is not None:
                params["tool_choice"] = _tool_choice(request.tool_choice)
        for key in ("temperature", "max_tokens", "reasoning_effort"):
            value = getattr(request, key)
            if value is not None:
                params[key] = value
        if request.cache_key and takes_cache_key(self.base_url):
            params["prompt_cache_key"] = request.cache_key
        return params

    def _wire(self, request: ModelRequest) -> list[dict[str, Any]]:
        origin, text_content = self.origin, self.text_content
        wire = self._wire_prefix.convert(request.messages, lambda m: [to_chat_message(m, origin, text_content=text_content)],
                                         key=(origin, text_content), mark=_shows_images)
        if self._wire_prefix.marked:  # only a history with a tool result that showed images is walked again
            wire = with_tool_images(request.messages, wire)
        return [{"role": "system", "content": request.system}, *wire] if request.system else wire


def _shows_images(m: dict[str, Any]) -> bool:
    return m.get("role") == "tool" and bool(images_of(m))


def to_chat_message(m: dict[str, Any], origin: str = "", *, text_content: bool = False) -> dict[str, Any]:
    """A stored message as Chat Completions wants it; provider fields go back only to ``origin``.
    ``text_content``: an assistant message's empty content is "" rather than null."""
    role = m["role"]
    if role == "tool":
        return {"role": "tool", "tool_call_id": m["tool_call_id"], "content": m.get("content") or ""}
    if role == "assistant":
        out: dict[str, Any] = {**message_fields(m, origin), "role": "assistant",
                               "content": m.get("content") or ("" if text_content else None)}
        if m.get("tool_calls"):
            out["tool_calls"] = [{**call_fields(m, origin, c["id"]), "id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c.get("arguments") or "{}"}}
                                 for c in m["tool_calls"]]
        elif out["content"] is None:
            out["content"] = ""
        return out
    if role == "user":
        return {"role": role, "content": chat_user_content(m)}
    return {"role": role, "content": m.get("content") or ""}


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and "name" in choice:
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


class _Assembler:
    """Builds the assistant message from chunks while passing deltas on."""

    def __init__(self, origin: str = ""):
        self.origin = origin
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.args: dict[int, list[str]] = {}
        self.extra: dict[str, Any] = {}
        """The message's fields the SDK does not know, merged over the deltas."""
        self.call_extra: dict[int, dict[str, Any]] = {}
        self.usage: UsageInfo | None = None
        self.finish_reason = "stop"

    def feed(self, chunk: Any) -> list[ModelChunk]:
        """One streamed chunk, as the server's JSON (a dict); anything else in its place is skipped."""
        out: list[ModelChunk] = []
        if not isinstance(chunk, dict):
            return out
        u = chunk.get("usage")
        if isinstance(u, dict) and u:
            self.usage = chat_usage(u, chunk.get("timings"))
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(delta, out)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return out

    def _delta(self, delta: dict[str, Any], out: list[ModelChunk]) -> None:
        extra = {k: v for k, v in delta.items() if k not in DELTA_FIELDS}
        if extra:
            merge_delta(self.extra, extra)
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        text, part_reasoning = split_content(delta.get("content"))
        for piece in (reasoning if isinstance(reasoning, str) else "", part_reasoning):
            if piece:
                self.reasoning.append(piece)
                out.append(ReasoningChunk(piece))
        if text:
            self.text.append(text)
            out.append(TextChunk(text))
        for tc in delta.get("tool_calls") or ():
            if isinstance(tc, dict):
                self._tool_delta(tc, out)

    def _tool_delta(self, tc: dict[str, Any], out: list[ModelChunk]) -> None:
        index = tc.get("index")
        index = index if isinstance(index, int) else len(self.calls)
        fn = tc.get("function")
        fn = fn if isinstance(fn, dict) else {}
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = {"id": tc.get("id") or "", "name": "", "arguments": ""}
            self.args[index] = []
        if not call["id"] and tc.get("id"):
            call["id"] = tc["id"]
        extra = {k: v for k, v in tc.items() if k not in TOOL_CALL_FIELDS}
        if extra:
            merge_delta(self.call_extra.setdefault(index, {}), extra)
        name, arguments = fn.get("name"), fn.get("arguments")
        if not call["name"] and name:
            call["name"] = name
            call["id"] = call["id"] or f"call_{next(_fallback_ids):06d}"
            out.append(ToolCallBegin(index=index, call_id=call["id"], name=name))
        if arguments:
            self.args[index].append(arguments)
            out.append(ToolCallArgs(index=index, text=arguments))

    def finish(self) -> list[ModelChunk]:
        out: list[ModelChunk] = [self.usage] if self.usage else []
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.reasoning:
            message["reasoning"] = "".join(self.reasoning)
        calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            call["arguments"] = "".join(self.args[index])
            call["id"] = call["id"] or f"call_{next(_fallback_ids):06d}"
            calls.append(call)
        if calls:
            message["tool_calls"] = calls
        attach(message, self.origin, self.extra,
               {self.calls[i]["id"]: extra for i, extra in self.call_extra.items() if i in self.calls})
        out.append(ResponseDone(message=message, finish_reason=self.finish_reason))
        return out


def chat_usage(u: dict[str, Any], timings: Any = None) -> UsageInfo:
    """A Chat Completions ``usage`` object; cached prompt tokens as each server reports them: OpenAI,
    vLLM and others in ``prompt_tokens_details.cached_tokens``, DeepSeek in ``prompt_cache_hit_tokens``,
    llama.cpp's server in ``timings.cache_n`` (the prompt tokens its KV cache already held)."""
    details = u.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if not cached:
        cached = u.get("prompt_cache_hit_tokens")
    if not cached and isinstance(timings, dict):
        cached = timings.get("cache_n")
    completion = u.get("completion_tokens_details")
    reasoning = completion.get("reasoning_tokens") if isinstance(completion, dict) else None
    return UsageInfo(input_tokens=_count(u.get("prompt_tokens")), output_tokens=_count(u.get("completion_tokens")),
                     cached_tokens=_count(cached), reasoning_tokens=_count(reasoning))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


async def _from_completion(completion, origin: str = "") -> AsyncIterator[ModelChunk]:
    """A non-streamed completion as the same chunks (llama.cpp needs this for auto tool choice)."""
    choice = completion.choices[0]
    msg = choice.message
    extra = dict(msg.model_extra or {})
    text, part_reasoning = split_content(msg.content)
    given = extra.get("reasoning_content") or extra.get("reasoning")
    reasoning = (given if isinstance(given, str) else "") + part_reasoning
    if reasoning:
        yield ReasoningChunk(reasoning)
    if text:
        yield TextChunk(text)
    calls, call_extra = [], {}
    for index, tc in enumerate(msg.tool_calls or ()):
        call = {"id": tc.id or f"call_{next(_fallback_ids):06d}", "name": tc.function.name,
                "arguments": tc.function.arguments or ""}
        calls.append(call)
        call_extra[call["id"]] = dict(tc.model_extra or {})
        yield ToolCallBegin(index=index, call_id=call["id"], name=call["name"])
        yield ToolCallArgs(index=index, text=call["arguments"])
    if completion.usage:
        yield chat_usage(completion.usage.model_dump(), (completion.model_extra or {}).get("timings"))
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        message["reasoning"] = reasoning
    if calls:
        message["tool_calls"] = calls
    attach(message, origin, extra, call_extra)
    yield ResponseDone(message=message, finish_reason=choice.finish_reason or "stop")
