"""An OpenAI-compatible endpoint on this machine that hands every chat completion to Inspect's agent bridge.

Inspect's in-process ``agent_bridge()`` routes a request the ``openai`` SDK's async client sends for
the model "inspect" to the evaluation's model, with Inspect's limits, retries and log; it does so in
the coroutines of the sample that opened it, and does not stream. nbagent's turn runs on its own
thread and event loop, streaming. So nbagent talks to this relay (``base_url``), which runs in the
sample's context: it sends each request on through the SDK as the model "inspect", and answers
nbagent with the completion (as one streamed chunk when nbagent asked for a stream).

A failure of the bridge (a limit reached, the model's error) is answered as an HTTP error, which
ends nbagent's turn, and kept in ``failure`` so that the agent re-raises it to Inspect.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from typing import Any

import openai
from openai.types.chat import ChatCompletion

MAX_BODY = 64 << 20
"""Bytes a request may have (a conversation with images stays far below)."""


class Relay:
    """``async with Relay() as relay``: ``relay.url`` is the base URL to give nbagent."""

    def __init__(self) -> None:
        self.url = ""
        self.failure: BaseException | None = None
        self.requests = 0
        self._server: asyncio.Server | None = None
        self._context: contextvars.Context | None = None
        # Never contacted: the bridge answers every request for the model "inspect" itself.
        self._client = openai.AsyncOpenAI(api_key="inspect-bridge", base_url="http://127.0.0.1:9/v1", max_retries=0)

    async def __aenter__(self) -> "Relay":
        self._context = contextvars.copy_context()  # the sample's, with the bridge switched on
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        await self._client.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            path, body = await _read_request(reader)
            if not path.rstrip("/").endswith("/chat/completions"):
                await _write(writer, 404, {"error": {"message": f"the relay serves chat completions, not {path}"}})
                return
            task = asyncio.get_running_loop().create_task(self.complete(body), context=self._context)
            try:
                completion = await task
            except Exception as exc:  # noqa: BLE001 - the bridge's failure goes to nbagent, and back to Inspect
                self.failure = self.failure or exc
                await _write(writer, 500, {"error": {"message": f"Inspect's model failed: {exc}"}})
                return
            if body.get("stream"):
                await _write_stream(writer, completion, bool((body.get("stream_options") or {}).get("include_usage")))
            else:
                await _write(writer, 200, completion)
        except ValueError as exc:
            await _write(writer, 400, {"error": {"message": str(exc)}})
        finally:
            writer.close()

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request sent through the SDK to the bridge (as the model "inspect", not streamed)."""
        self.requests += 1
        request = {k: v for k, v in body.items() if k not in ("stream", "stream_options", "prompt_cache_key")}
        request["model"] = "inspect"
        completion = await self._client.post("/chat/completions", body=request, cast_to=ChatCompletion)
        return completion.model_dump(mode="json", exclude_none=True)


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, Any]]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    method, path, _ = (head[0].split(" ") + ["", ""])[:3]
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    length = int(headers.get("content-length") or 0)
    if method != "POST" or not 0 < length <= MAX_BODY:
        raise ValueError(f"expected a POST with a JSON body, got {method} {path}")
    body = json.loads(await reader.readexactly(length))
    if not isinstance(body, dict):
        raise ValueError("the request body is not a JSON object")
    return path, body


async def _write(writer: asyncio.StreamWriter, status: int, data: dict[str, Any]) -> None:
    payload = json.dumps(data).encode()
    writer.write(f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
    await writer.drain()


async def _write_stream(writer: asyncio.StreamWriter, completion: dict[str, Any], usage: bool) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    for chunk in chunks(completion, usage):
        writer.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
    writer.write(b"data: [DONE]\n\n")
    await writer.drain()


def chunks(completion: dict[str, Any], usage: bool) -> list[dict[str, Any]]:
    """A whole completion as the chunks of a stream: its message, its finish, its usage."""
    base = {k: completion.get(k) for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    out = []
    for choice in completion.get("choices") or []:
        message, index = choice.get("message") or {}, choice.get("index", 0)
        delta: dict[str, Any] = {"role": "assistant"}
        for key in ("content", "reasoning_content", "refusal"):
            if message.get(key):
                delta[key] = message[key]
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": i, "id": call.get("id"), "type": "function",
                                    "function": call.get("function") or {}}
                                   for i, call in enumerate(message["tool_calls"])]
        out.append({**base, "choices": [{"index": index, "delta": delta, "finish_reason": None}]})
        out.append({**base, "choices": [{"index": index, "delta": {}, "finish_reason": choice.get("finish_reason")}]})
    if usage and completion.get("usage"):
        out.append({**base, "choices": [], "usage": completion["usage"]})
    return out
