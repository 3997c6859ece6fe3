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


def prompt_text(body: dict[str, Any]) -> str:
    """A request's prompt in the order a provider lays it out before tokenizing: the tools, then the
    instructions (system prompt), then the conversation, each part as stable JSON. A provider's cache
    hit is the part of this that is a byte-identical prefix of an earlier request's."""
    parts: list[Any] = [body.get("tools") or [], body.get("instructions") or ""]
    conversation = body.get("messages") if "messages" in body else body.get("input")
    parts += conversation if isinstance(conversation, list) else [conversation]
    return "\n".join(json.dumps(p, sort_keys=True, ensure_ascii=False) for p in parts)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # a[:low] == b[:low], a[:high] != b[:high]
    while high - low > 1:
        mid = (low + high) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid
    return low


def openai_cached_tokens(shared_chars: int, prompt_tokens: int) -> int:
    """What OpenAI reports as cached for a prefix of ``shared_chars``: nothing under 1,024 tokens,
    then whole 128-token blocks (at about four characters a token, as the rest of this double)."""
    shared = min(shared_chars // 4, prompt_tokens)
    return 0 if shared < 1024 else shared - (shared - 1024) % 128


def finish_reason(reply: Reply) -> str:
    if reply.finish_reason:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def usage_counts(reply: Reply, prompt: Any) -> tuple[int, int, int]:
    """(input, output, reasoning) tokens: the scripted ones, else estimates (an image counted as
    OpenAI counts it, by its tiles, not by its base64's length)."""
    reasoning = estimate_tokens(reply.reasoning)
    if reply.input_tokens is not None:
        input_tokens = reply.input_tokens
    else:
        images: list[int] = []
        input_tokens = estimate_tokens(_images_out(prompt, images)) + sum(images)
    if reply.output_tokens is not None:
        output_tokens = reply.output_tokens
    else:
        spoken = reply.text + "".join(c.name + c.arguments_json() for c in reply.tool_calls)
        output_tokens = estimate_tokens(spoken) + reasoning
    return input_tokens, output_tokens, min(reasoning, output_tokens)


def _images_out(value: Any, found: list[int]) -> Any:
    """``value`` with each image data URL replaced by a short mark; its tokens are added to ``found``."""
    if isinstance(value, str) and value.startswith("data:image/") and ";base64," in value:
        found.append(_image_tokens(value))
        return "<image>"
    if isinstance(value, dict):
        return {k: _images_out(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_images_out(v, found) for v in value]
    return value


def _image_tokens(url: str) -> int:
    import base64
    import io

    from PIL import Image, UnidentifiedImageError

    from nbagent.images import estimate_tokens as image_tokens

    try:
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
            return image_tokens(*im.size)
    except (UnidentifiedImageError, OSError, ValueError):
        return 85  # what OpenAI charges an image at detail "low"


def cached_count(reply: Reply, input_tokens: int) -> int:
    return min(reply.cached_tokens or 0, input_tokens)


def calls_with_ids(reply: Reply) -> list[tuple[Call, str]]:
    """Each tool call with its call id: the scripted one, or a fresh "call_..." one."""
    return [(c, c.id or new_id("call_")) for c in reply.tool_calls]
