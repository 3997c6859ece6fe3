"""The three ways a completion asks the model, each streamed: fill-in-the-middle where the server has it.

- ``infill``: llama.cpp's server, ``POST /infill`` with ``input_prefix``, ``input_suffix`` and the
  notebook's header as one ``input_extra`` file; it streams ``{"content", "stop"}`` objects, the last
  with ``tokens_evaluated`` and ``tokens_predicted``.
- ``completions``: ``POST /v1/completions`` with ``prompt`` and ``suffix`` (Ollama documents ``suffix``
  there; OpenAI's legacy endpoint takes it too), streamed as choices' ``text``, usage at the end.
- ``chat``: a short chat prompt (nbagent.complete.prompt.chat_messages) for every other server.

Each yields text pieces, then one ``Usage``. All go through the openai SDK's client (its connection
pool, TLS and timeouts); a consumer that stops early (the editor's next keystroke) closes the HTTP
response, which the server sees at once.
"""

from __future__ import annotations

import re
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, AsyncGenerator

from .prompt import FimPrompt, chat_messages

MODES = ("infill", "completions", "chat")
STOP = ["\n\n\n", "\n# %%"]
"""Where a completion ends: a blank run of lines or the next cell."""


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


def server_root(base_url: str | None) -> str:
    """The server's own root: llama.cpp's and Ollama's native routes sit beside /v1."""
    return re.sub(r"/v1/?$", "", (base_url or "").rstrip("/"))


async def stream(mode: str, client: Any, base_url: str | None, model: str, prompt: FimPrompt,
                 max_tokens: int) -> AsyncGenerator[str | Usage, None]:
    if mode == "infill":
        pieces = _infill(client, base_url, prompt, max_tokens)
    elif mode == "completions":
        pieces = _completions(client, model, prompt, max_tokens)
    else:
        pieces = _chat(client, model, prompt, max_tokens)
    async with aclosing(pieces):
        async for piece in pieces:
            yield piece


async def _infill(client: Any, base_url: str | None, prompt: FimPrompt, max_tokens: int):
    import openai

    body: dict[str, Any] = {"input_prefix": prompt.prefix, "input_suffix": prompt.suffix, "prompt": "",
                            "n_predict": max_tokens, "stream": True, "cache_prompt": True, "stop": STOP}
    if prompt.header:
        body["input_extra"] = [{"filename": "kernel.py", "text": prompt.header}]
    response = await client.post(f"{server_root(base_url)}/infill", body=body, cast_to=object, stream=True,
                                 stream_cls=openai.AsyncStream[object])
    usage = Usage()
    async with response:
        async for chunk in response:
            if not isinstance(chunk, dict):
                continue
            if chunk.get("content"):
                yield str(chunk["content"])
            if chunk.get("stop"):
                usage.input_tokens = int(chunk.get("tokens_evaluated") or 0)
                usage.output_tokens = int(chunk.get("tokens_predicted") or 0)
                break
    yield usage


async def _completions(client: Any, model: str, prompt: FimPrompt, max_tokens: int):
    text = f"{prompt.header}\n{prompt.prefix}" if prompt.header else prompt.prefix
    response = await client.completions.create(
        model=model, prompt=text, suffix=prompt.suffix, max_tokens=max_tokens, temperature=0.2, stop=STOP,
        stream=True, stream_options={"include_usage": True})
    usage = Usage()
    async with response:
        async for chunk in response:
            for choice in chunk.choices or ():
                if choice.text:
                    yield choice.text
            _add_usage(usage, chunk.usage)
    yield usage


async def _chat(client: Any, model: str, prompt: FimPrompt, max_tokens: int):
    response = await client.chat.completions.create(
        model=model, messages=chat_messages(prompt), max_tokens=max_tokens, temperature=0.2, stream=True,
        stream_options={"include_usage": True})
    usage = Usage()
    fence = FenceFilter()
    async with response:
        async for chunk in response:
            for choice in chunk.choices or ():
                text = fence.feed(choice.delta.content or "")
                if text:
                    yield text
            _add_usage(usage, chunk.usage)
            if fence.closed:
                break
    rest = fence.flush()
    if rest:
        yield rest
    yield usage


def _add_usage(usage: Usage, wire: Any) -> None:
    if wire is None:
        return
    usage.input_tokens = int(getattr(wire, "prompt_tokens", 0) or 0)
    usage.output_tokens = int(getattr(wire, "completion_tokens", 0) or 0)
    details = getattr(wire, "prompt_tokens_details", None)
    usage.cached_tokens = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0


class FenceFilter:
    """A chat model's answer without the code fence some models put around it anyway, as it streams."""

    def __init__(self) -> None:
        self._head = ""
        self._started = False
        self._fenced = False
        self._tail = ""
        self.closed = False

    def feed(self, text: str) -> str:
        if self.closed:
            return ""
        if not self._started:
            self._head += text
            if len(self._head) < 3 and "```".startswith(self._head):
                return ""  # it may still become a fence
            if self._head.startswith("```"):
                if "\n" not in self._head:
                    return ""  # the fence's language line is not over yet
                self._fenced = True
                text = self._head.split("\n", 1)[1]
            else:
                text = self._head
            self._started = True
        return self._body(text)

    def _body(self, text: str) -> str:
        if not self._fenced:
            return text
        text = self._tail + text
        end = text.find("```")
        if end >= 0:
            self.closed = True
            return text[:end].rstrip("\n")
        body = text.rstrip("`\n")  # a closing fence may be arriving a character at a time
        self._tail = text[len(body):]
        return body

    def flush(self) -> str:
        if not self._started:
            return "" if self._head.startswith("`") else self._head
        return "" if self.closed else self._tail
