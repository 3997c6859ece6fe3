"""The Completer: one per server, it streams completions from the user's model, cached, and counts them.

It reads the user's configuration (the endpoint, ``completion_model`` over ``model``,
``completions`` on/off/auto, ``completion_fim``), picks how to ask the server (nbagent.complete.wire:
llama.cpp's infill, Ollama's suffix on /v1/completions, else a chat prompt; a refused
fill-in-the-middle request falls back to chat for good), answers the same prompt from its cache, and
appends one line per model request to the state directory's completions.jsonl, which ``nbagent stats``
counts as their own kind.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncGenerator

from ..errors import ConfigError
from .prompt import CompletionRequest, fim_prompt
from .usage import record_completion
from .wire import MODES, Usage, stream

CACHE_SIZE = 256
REFUSED = frozenset({400, 404, 405, 422, 501})
"""How a server says no to fill-in-the-middle: llama.cpp answers 501 for a model without FIM tokens,
servers without the route 404 or 405, a suffix they do not take 400 or 422."""
MAX_TOKENS = 96


class CompletionsOff(Exception):
    """Completions are switched off here; the message says why and how to turn them on."""


@dataclass(frozen=True)
class Choice:
    """Where a completion goes: the endpoint, the model name and the way of asking."""

    base_url: str | None
    api_key: str | None
    model: str
    fim: str


class Completer:
    def __init__(self, config: Any, root: Path | None = None):
        self.config = config
        self.root = root
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._client: Any = None
        self._client_for_where: tuple[str | None, str | None] | None = None
        self._choices: dict[tuple[str | None, bool], Choice] = {}
        self._mode: str | None = None
        self.requests = 0
        """Model requests sent (cache hits are not requests)."""
        self.in_flight = 0
        """Model requests open now: one that is cancelled leaves at once."""

    async def achoice(self, model: str | None = None, force_on: bool = False) -> Choice:
        """``choice`` for an event loop: the first call per setting runs on a thread (for the offline
        model it starts the llama.cpp server), later ones come from memory."""
        key = (model, force_on)
        if key not in self._choices:
            self._choices[key] = await asyncio.to_thread(self.choice, model, force_on)
        return self._choices[key]

    def choice(self, model: str | None = None, force_on: bool = False) -> Choice:
        """The endpoint and model; CompletionsOff when completions are off for this configuration."""
        from ..model.factory import DEFAULT_OPENAI_MODEL, uses_local

        config = self.config
        setting = "on" if force_on else config.completions
        if setting == "off":
            raise CompletionsOff("inline completions are off (completions setting, NBAGENT_COMPLETIONS)")
        local = uses_local(config)
        if local and setting != "on":
            raise CompletionsOff("inline completions are off for the offline model: turn them on with "
                                 "NBAGENT_COMPLETIONS=on or the extension's setting")
        if local:
            from ..model.factory import _local_endpoint

            config = _local_endpoint(config)
        elif not config.base_url and not config.api_key:
            raise CompletionsOff("no model endpoint is configured (OPENAI_BASE_URL or OPENAI_API_KEY)")
        name = model or config.completion_model or config.model or (None if config.base_url else DEFAULT_OPENAI_MODEL)
        if not name:
            raise ConfigError("no model name for completions: set completion_model (NBAGENT_COMPLETION_MODEL)")
        return Choice(config.base_url, config.api_key, name, config.completion_fim)

    async def stream(self, request: CompletionRequest, choice: Choice) -> AsyncGenerator[str, None]:
        """The completion's text as it comes; stopping early (``aclose``, a cancel) closes the model request."""
        prompt = fim_prompt(request)
        mode = await self._mode_for(choice)
        key = prompt.key(choice.model, mode)
        if key in self._cache:
            self._cache.move_to_end(key)
            yield self._cache[key]
            return
        parts: list[str] = []
        started, usage, done = time.monotonic(), Usage(), False
        self.requests += 1
        self.in_flight += 1
        try:
            pieces = stream(mode, self._client_for(choice), choice.base_url, choice.model, prompt, MAX_TOKENS)
            # Closed here, not by the garbage collector: the model's HTTP response closes with it.
            async with aclosing(_fallback(pieces, self, choice, prompt, mode)) as answer:
                async for piece in answer:
                    if isinstance(piece, Usage):
                        usage = piece
                        continue
                    parts.append(piece)
                    yield piece
            done = True
        finally:
            self.in_flight -= 1
            self._record(choice, mode, prompt, parts, usage, started, done)
        if done:
            self._remember(key, "".join(parts))

    async def _mode_for(self, choice: Choice) -> str:
        if choice.fim in MODES:
            return choice.fim
        if self._mode is None:
            self._mode = await self._detect(choice)
        return self._mode

    async def _detect(self, choice: Choice) -> str:
        """infill for llama.cpp's server, completions (with suffix) for Ollama, chat for the rest."""
        from ..model.served_context import served_context

        if not choice.base_url:
            return "chat"  # OpenAI itself: its /v1/completions serves only legacy instruct models
        served = await served_context(self._client_for(choice), choice.base_url, choice.model)
        if served is None:
            return "chat"
        return {"llama.cpp": "infill", "ollama": "completions"}.get(served.server, "chat")

    def fall_back(self) -> None:
        """The server refused fill-in-the-middle (no FIM tokens, no suffix support): chat from now on."""
        self._mode = "chat"

    def _client_for(self, choice: Choice) -> Any:
        where = (choice.base_url, choice.api_key)
        if self._client is None or self._client_for_where != where:
            from ..model.openai_common import make_client

            self._client = make_client(self.config.with_changes(base_url=choice.base_url, api_key=choice.api_key))
            self._client_for_where = where
        return self._client

    def _remember(self, key: str, text: str) -> None:
        self._cache[key] = text
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    def _record(self, choice: Choice, mode: str, prompt, parts: list[str], usage: Usage, started: float,
                done: bool) -> None:
        if self.root is None:
            return
        estimated = not (usage.input_tokens or usage.output_tokens)
        if estimated:  # a cancelled request says nothing: about four characters a token
            usage = Usage(len(prompt.header + prompt.prefix + prompt.suffix) // 4, len("".join(parts)) // 4)
        record_completion(self.root, self.config, choice.model, choice.base_url, mode, usage,
                          ms=(time.monotonic() - started) * 1000, cancelled=not done, estimated=estimated)


async def _fallback(pieces: AsyncGenerator[str | Usage, None], completer: Completer, choice: Choice, prompt,
                    mode: str) -> AsyncGenerator[str | Usage, None]:
    """The pieces; a fill-in-the-middle request the server refuses (REFUSED, before any text) is asked again
    as chat, and the completer asks chat from then on."""
    import openai

    try:
        async with aclosing(pieces):
            async for piece in pieces:
                yield piece
    except openai.APIStatusError as exc:
        if mode == "chat" or choice.fim != "auto" or exc.status_code not in REFUSED:
            raise
        completer.fall_back()
        async with aclosing(stream("chat", completer._client_for(choice), choice.base_url, choice.model, prompt,
                                   MAX_TOKENS)) as chat:
            async for piece in chat:
                yield piece

