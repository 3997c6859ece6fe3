"""The seam between the loop and a model: one request in, a stream of chunks out.

Messages are provider-neutral dicts (see docs/internals.md):
  {"role": "user", "content": str}
  {"role": "assistant", "content": str, "reasoning": str, "reasoning_items": [dict],
   "tool_calls": [{"id": str, "name": str, "arguments": str, "item_id"?: str, "reasoning_id"?: str}]}
  {"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool}
An adapter turns them into Chat Completions messages or Responses input items.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Protocol, runtime_checkable

AFTER_SEND: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("nbagent_after_send",
                                                                                      default=None)
"""Set by the loop around a model call: an adapter that sends an HTTP request calls it (on the event loop)
once the request's body has gone out, while the model reads it (nbagent.model.openai_common's hook), for
work that need not delay the request: the turn's first commits. The loop runs it itself at the first chunk
when no adapter did."""


@dataclass
class ModelRequest:
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = None
    """None lets the model choose; "required", "none" or {"name": ...} force it."""
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    stream: bool = True
    cache_key: str | None = None
    """Groups requests that share a prefix (the session id): sent as ``prompt_cache_key`` only to
    providers that document it (nbagent.model.openai_common.takes_cache_key)."""


@dataclass
class TextChunk:
    text: str


@dataclass
class ReasoningChunk:
    text: str


@dataclass
class ToolCallBegin:
    """The tool's name has arrived; its arguments follow as ToolCallArgs."""

    index: int
    call_id: str
    name: str


@dataclass
class ToolCallArgs:
    index: int
    text: str


@dataclass
class UsageInfo:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass
class ResponseDone:
    """The whole assistant message, assembled by the adapter, and why the model stopped."""

    message: dict[str, Any]
    finish_reason: str = "stop"


ModelChunk = TextChunk | ReasoningChunk | ToolCallBegin | ToolCallArgs | UsageInfo | ResponseDone


@runtime_checkable
class Model(Protocol):
    name: str
    provider: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Yield chunks, ending with exactly one ResponseDone; raise ModelError on failure."""
        ...

    async def aclose(self) -> None:
        ...
