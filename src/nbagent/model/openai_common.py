"""What both OpenAI adapters share: the client, error mapping and retries with backoff.

Retries happen only before anything was streamed: once text has reached the
user, replaying the request would say it twice, so a break mid-stream is an
error event with everything already said kept.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
import re
import ssl
from typing import Any, AsyncGenerator, AsyncIterator, Awaitable, Callable
from urllib.parse import urlparse

import httpx2  # the openai SDK's HTTP library (its DefaultAsyncHttpxClient is an httpx2.AsyncClient)
import openai
import orjson
from openai._streaming import SSEDecoder  # the SDK's SSE reader: the stream is parsed as the SDK parses it

from ..errors import ModelError
from .base import AFTER_SEND
from ..render.redaction import public_url

RETRYABLE = {"rate_limit", "server", "connection"}
CACHE_KEY_HOSTS = frozenset({"api.openai.com", "api.mistral.ai"})
"""Providers that document ``prompt_cache_key``: OpenAI (it routes requests with the same key to the
same cache) and Mistral. Other servers may answer 400 to a field they do not know, so they never get it."""
_CONTEXT = re.compile(r"context (length|window)|maximum context|too many tokens|context_length", re.I)


def takes_cache_key(base_url: str | None) -> bool:
    """True for the official OpenAI endpoint (no base_url) and the hosts in CACHE_KEY_HOSTS."""
    if not base_url:
        return True
    return (urlparse(base_url).hostname or "").lower() in CACHE_KEY_HOSTS


def make_client(config) -> openai.AsyncOpenAI:
    # The SDK's own retries are off: ours are bounded by the config and visible in tests.
    # The TLS context is the process's one: building it reads the system's CA store, 20-25 ms of CPU
    # per agent, which many agents (a batch, a server's sessions) would otherwise pay each.
    http_client = openai.DefaultAsyncHttpxClient(verify=shared_ssl_context(os.environ.get("SSL_CERT_FILE"),
                                                                           os.environ.get("SSL_CERT_DIR")),
                                                 event_hooks={"request": [_when_sent]})
    return openai.AsyncOpenAI(
        base_url=config.base_url, api_key=config.api_key or "not-needed",
        timeout=config.request_timeout, max_retries=0, http_client=http_client,
    )


async def _when_sent(request: httpx2.Request) -> None:
    """The client's request hook: hand AFTER_SEND's function to the body, which schedules it when read
    to the end, that is once the whole request is written (the next wait is for the answer)."""
    then = AFTER_SEND.get()
    if then is not None:
        AFTER_SEND.set(None)
        request.stream = _ThenStream(request.stream, then)


class _ThenStream(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, then: Callable[[], None]):
        self._stream, self._then = stream, then

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk
        asyncio.get_running_loop().call_soon(self._then)

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


@functools.lru_cache(maxsize=4)
def shared_ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The TLS client context the HTTP library would build (honouring SSL_CERT_FILE / SSL_CERT_DIR,
    hence the arguments as the cache key); an SSLContext is safe to share across threads and loops."""
    if cert_file:
        return ssl.create_default_context(cafile=cert_file)
    if cert_dir:
        return ssl.create_default_context(capath=cert_dir)
    return ssl.create_default_context()


def to_model_error(exc: BaseException, model: str, base_url: str | None) -> ModelError:
    """A clear, actionable message for each way a request fails."""
    where = public_url(base_url) or "the OpenAI API"
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(f"the request to {where} timed out", kind="timeout")
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(f"cannot reach {where}: {exc}", kind="connection")
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, model, where)
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return ModelError(f"the model stream failed: {exc}", kind="stream_broken")
    return ModelError(f"the model stream broke off: {type(exc).__name__}: {exc}", kind="stream_broken")


def _status_error(exc: openai.APIStatusError, model: str, where: str) -> ModelError:
    status, detail = exc.status_code, _detail(exc)
    if status in (401, 403):
        return ModelError(f"{where} refused the API key ({status}): {detail}. Set OPENAI_API_KEY "
                          "or pass api_key=...", kind="auth", status_code=status)
    if status == 404:
        return ModelError(f"model {model!r} not found at {where} (404): {detail}. Check NBAGENT_MODEL "
                          "or pass model=...", kind="not_found", status_code=status)
    if status == 429:
        return ModelError(f"rate limited by {where} (429): {detail}", kind="rate_limit", status_code=status)
    if status >= 500:
        return ModelError(f"{where} failed ({status}): {detail}", kind="server", status_code=status)
    if status in (400, 413) and _CONTEXT.search(detail):
        return ModelError(f"the conversation is longer than the model's context: {detail}. "
                          "Use /compact or start a new session", kind="context_overflow", status_code=status)
    return ModelError(f"{where} rejected the request ({status}): {detail}", kind="bad_request",
                      status_code=status)


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body) if isinstance(body, dict) else {}
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return str(exc.message or exc)


def retry_delay(exc: BaseException, attempt: int, base: float) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins when it is reasonable."""
    response = getattr(getattr(exc, "__cause__", None), "response", None) or getattr(exc, "response", None)
    if response is not None:
        for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value = response.headers.get(header)
            try:
                if value is not None and 0 <= float(value) * scale <= 60:
                    return float(value) * scale
            except ValueError:
                pass
    return base * (2 ** attempt) * (0.75 + random.random() / 2)


async def with_retries(open_stream: Callable[[], Awaitable[Any]], *, config, model: str,
                       on_retry: Callable[[ModelError, float], None] | None = None) -> Any:
    """Open a stream, retrying 429, 5xx and connection failures up to ``config.max_retries`` times."""
    attempt = 0
    while True:
        try:
            return await open_stream()
        except Exception as exc:
            error = to_model_error(exc, model, config.base_url)
            if error.kind not in RETRYABLE or attempt >= config.max_retries:
                raise error from exc
            delay = retry_delay(exc, attempt, config.retry_base_delay)
            if on_retry:
                on_retry(error, delay)
            attempt += 1
            await asyncio.sleep(delay)


async def guarded(stream: AsyncIterator[Any], model: str, base_url: str | None) -> AsyncGenerator[Any, None]:
    """Iterate an SDK stream, turning any failure into a ModelError."""
    try:
        async for item in stream:
            yield item
    except (asyncio.CancelledError, GeneratorExit):
        raise
    except Exception as exc:
        error = to_model_error(exc, model, base_url)
        if error.kind == "connection":  # the connection dropped after the response had started
            error = ModelError(f"the model stream broke off mid-way: {exc}", kind="stream_broken")
        raise error from exc


async def open_chunk_stream(client: openai.AsyncOpenAI, params: dict[str, Any]) -> AsyncIterator[Any]:
    """Send a streamed Chat Completions request through the SDK; its chunks come back as plain JSON.

    The SDK builds, authenticates and sends the request and raises its status errors as for
    ``create()``; the body is read with the SDK's own SSE decoder. What is left out is turning every
    chunk into pydantic objects: for a short answer that was about 40% of the CPU the client spent
    on a request (1 ms of 2.4, measured with the scripted server), which a batch of many agents
    pays per step. An error object inside the stream raises ``openai.APIError``, as the SDK does.
    """
    manager = client.chat.completions.with_streaming_response.create(**params)
    response = await manager.__aenter__()
    return _chunks(manager, response)


async def _chunks(manager: Any, response: Any) -> AsyncGenerator[Any, None]:
    try:
        done = False
        async for sse in SSEDecoder().aiter_bytes(response.http_response.aiter_bytes()):
            if done or not sse.data:
                continue  # after [DONE] the rest is read all the same, so the connection can be reused
            if sse.data.startswith("[DONE]"):
                done = True
                continue
            data = _json(sse.data)
            if isinstance(data, dict) and data.get("error"):
                error = data["error"]
                message = error.get("message") if isinstance(error, dict) else None
                raise openai.APIError(message=message if isinstance(message, str) and message
                                      else "An error occurred during streaming",
                                      request=response.http_response.request, body=error)
            yield data
    finally:
        await manager.__aexit__(None, None, None)


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except ValueError:  # what orjson refuses and Python's json takes (NaN), or a real error, raised here
        return json.loads(text)


# The SDK validates and transforms every request parameter through its typed
# schemas; for a long history or a full tool list that costs 10-30 ms per call
# (measured on this machine). The heavy parameters are plain JSON already, so
# they go in ``extra_body``, which the SDK merges into the body untouched.
HEAVY_PARAMS = ("messages", "tools", "input", "instructions")


def split_heavy(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the heavy parts moved into ``extra_body`` (required ones left as placeholders)."""
    light = {k: v for k, v in params.items() if k not in HEAVY_PARAMS}
    light["extra_body"] = {k: params[k] for k in HEAVY_PARAMS if k in params}
    if "messages" in params:
        light["messages"] = []  # required by the signature; replaced by extra_body's copy
    return light


def tool_param(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": spec["name"], "description": spec["description"],
                                             "parameters": spec["parameters"]}}
