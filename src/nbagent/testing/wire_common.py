"""What both wire formats of the scripted server share: options, ids, splitting, usage estimates."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Literal

from nbagent.testing.replies import Call, Reply


@dataclass(frozen=True)
class WireOptions:
    """How the scripted server shapes its answers (see ScriptedServer for each option)."""

    model: str = "scripted-model"
    chunk_size: int = 8
    llama_cpp_style: bool = False
    usage: bool = True
    reasoning_field: Literal["reasoning_content", "reasoning"] = "reasoning_content"


@dataclass(frozen=True)
class SSE:
    """One server-sent event: `data` is a JSON payload, or the literal "[DONE]"."""

    data: dict[str, Any] | str
    event: str | None = None

    def encode(self) -> bytes:
        data = self.data if isinstance(self.data, str) else json.dumps(self.data)
        head = f"event: {self.event}\n" if self.event else ""
        return f"{head}data: {data}\n\n".encode()


def new_id(prefix: str) -> str:
    return prefix + os.urandom(12).hex()


def now() -> int:
    return int(time.time())


def pieces(text: str, size: int) -> list[str]:
    """Split text into chunks of `size` characters (an empty text gives no chunks)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def estimate_tokens(value: Any) -> int:
    """About four characters a token: plausible numbers, stable for a given request."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return max(1, math.ceil(len(text) / 4)) if text else 0


def finish_reason(reply: Reply) -> str:
    if reply.finish_reason:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def usage_counts(reply: Reply, prompt: Any) -> tuple[int, int, int]:
    """(input, output, reasoning) tokens: the scripted ones, else estimates."""
    reasoning = estimate_tokens(reply.reasoning)
    if reply.input_tokens is not None:
        input_tokens = reply.input_tokens
    else:
        input_tokens = estimate_tokens(prompt)
    if reply.output_tokens is not None:
        output_tokens = reply.output_tokens
    else:
        spoken = reply.text + "".join(c.name + c.arguments_json() for c in reply.tool_calls)
        output_tokens = estimate_tokens(spoken) + reasoning
    return input_tokens, output_tokens, min(reasoning, output_tokens)


def calls_with_ids(reply: Reply) -> list[tuple[Call, str]]:
    """Each tool call with its call id: the scripted one, or a fresh "call_..." one."""
    return [(c, c.id or new_id("call_")) for c in reply.tool_calls]
