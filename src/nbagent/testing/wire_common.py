"""What both wire formats of the scripted server share: options, ids, splitting, usage estimates."""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal

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
    """One server-sent event: `data` is a JSON payload, or the literal "[DONE]", or a function that makes
    the payload when the event is sent (the usage: a provider counts it at the end of the answer, and
    counting it before the first chunk put this double's work into every time-to-first-text figure)."""

    data: dict[str, Any] | str | Callable[[], dict[str, Any]]
    event: str | None = None

    def encode(self) -> bytes:
        payload = self.data() if callable(self.data) else self.data
        data = payload if isinstance(payload, str) else json.dumps(payload)
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


CACHE_BLOCK_CHARS = 512
"""OpenAI reports cached tokens in whole 128-token blocks past the first 1,024: at about four characters
a token (as the rest of this double counts), a shared prefix matters in blocks of 512 characters only."""


class PromptCache:
    """What a provider's prompt cache holds: every block-aligned prefix of the prompts it has seen, by
    hash. A request's cached part is its longest such prefix, found in one pass over it. (Comparing it
    with each earlier prompt instead took 1.5 ms a request at 64 prompts: time on the provider's side
    that every figure measured against this server, such as the time to first text, counted as ours.)"""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def shared_chars(self, text: str) -> int:
        """How many characters at the start of ``text`` an earlier prompt had, in whole blocks; ``text``
        is remembered for the prompts after it. Not thread-safe: the caller holds its lock."""
        digest = hashlib.blake2b(digest_size=16)
        prefixes = []
        for start in range(0, len(text) - CACHE_BLOCK_CHARS + 1, CACHE_BLOCK_CHARS):
            digest.update(text[start:start + CACHE_BLOCK_CHARS].encode("utf-8", "surrogatepass"))
            prefixes.append(digest.copy().digest())
        shared = 0
        while shared < len(prefixes) and prefixes[shared] in self._seen:
            shared += 1
        self._seen.update(prefixes)
        return shared * CACHE_BLOCK_CHARS


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


def cached_count(reply: Reply, input_tokens: int, cached: Callable[[], int] | None = None) -> int:
    """The reply's scripted cached tokens, else what the server's prompt cache finds (``cached``, asked
    either way: it remembers the prompt for the requests after it)."""
    found = cached() if cached is not None else 0
    return min(found if reply.cached_tokens is None else reply.cached_tokens, input_tokens)


def calls_with_ids(reply: Reply) -> list[tuple[Call, str]]:
    """Each tool call with its call id: the scripted one, or a fresh "call_..." one."""
    return [(c, c.id or new_id("call_")) for c in reply.tool_calls]
