"""ScriptedServer: a real OpenAI-compatible HTTP server that plays a script of replies.

It serves POST /v1/chat/completions and POST /v1/responses (streamed as SSE over chunked HTTP/1.1,
or as one JSON object), the fill-in-the-middle endpoints POST /v1/completions (with ``suffix``) and
llama.cpp's POST /infill (nbagent.testing.fim_wire), and GET /v1/models, so tests run the real `openai` client, its retries and
its error types included. Like OpenAI it reports the cached part of each prompt (the byte-identical
prefix it shares with an earlier request, see wire_common.prompt_text), and it can answer as Ollama
(/api/show, /api/ps, /api/generate) or llama.cpp's server (/props) do about the context they serve. Each request takes the next scripted item (see nbagent.testing.replies)::

    with ScriptedServer() as server:
        server.enqueue(Reply(reasoning="...", text="Hi", tool_calls=[Call("ls", {})]), Fail(429))
        client = OpenAI(base_url=server.url, api_key="sk-test", max_retries=0)
        ...
        server.assert_complete()

The stdlib http.server is enough here (and keeps the package free of server dependencies); a
ThreadingHTTPServer answers each connection on its own thread, so a Stall does not block others.
Mind the client's own retries: the openai SDK retries 429, 5xx, timeouts and connection errors
twice by default, each retry taking the next scripted item; use max_retries=0 to see one failure.
"""

from __future__ import annotations

import functools
import json
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Literal

from nbagent.testing.chat_wire import chat_completion, chat_stream
from nbagent.testing.error_wire import error_response
from nbagent.testing.fim_wire import completions_object, completions_stream, infill_object, infill_stream
from nbagent.testing.replies import BreakStream, Fail, Recorded, Reply, Scripted, Slow, Stall, as_scripted
from nbagent.testing.responses_wire import responses_object, responses_stream
from nbagent.testing.served import ServedContext
from nbagent.testing.wire_common import SSE, PromptCache, WireOptions, now, openai_cached_tokens, prompt_text

Streamer = Callable[..., list[SSE]]
"""(reply, body, options[, cached]) -> the events; ``cached`` for the APIs in _PROMPT_CACHED."""
Completer = Callable[..., dict[str, Any]]

_PROMPT_CACHED = {"chat", "responses"}
"""The APIs whose usage reports cached prompt tokens (their wire functions take the cache's count)."""
_ROUTES: dict[str, tuple[str, Streamer, Completer]] = {
    "/v1/chat/completions": ("chat", chat_stream, chat_completion),
    "/v1/responses": ("responses", responses_stream, responses_object),
    "/v1/completions": ("completions", completions_stream, completions_object),
    "/infill": ("infill", infill_stream, infill_object),
}


@dataclass
class RecordedRequest:
    """One request as the server got it: `body` is the parsed JSON (None if it was not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: dict[str, Any] | None
    api: str | None = None
    """"chat", "responses", "completions" (/v1/completions) or "infill" (llama.cpp's /infill) for the
    model endpoints, else None."""
    raw: bytes = b""
    """The body's bytes as they came (for tests that compare requests byte for byte)."""
    peer: str = ""
    """The client's address and port: requests sent over one kept-alive connection share it."""
    at: float = 0.0
    """``time.time()`` when the request had been read (benchmarks compare it with a client's clock)."""
    first_sent: float | None = None
    """``time.time()`` when the first chunk of a streamed answer had been written."""
    hung_up: float | None = None
    """``time.time()`` when writing the answer failed because the client had closed the connection."""


@dataclass
class _Plan:
    """How to deliver a reply: pauses, a stall, or a break after some chunks."""

    delay: float = 0.0
    stall_after: int | None = None
    stall_seconds: float = 0.0
    break_after: int | None = None


def _unwrap(item: Scripted) -> tuple[Reply, _Plan]:
    if isinstance(item, BreakStream):
        return item.reply, _Plan(break_after=item.after_chunks)
    if isinstance(item, Stall):
        return item.reply, _Plan(stall_after=item.after_chunks or 0, stall_seconds=item.seconds)
    if isinstance(item, Slow):
        return item.reply, _Plan(delay=item.delay_per_chunk)
    assert isinstance(item, Reply)
    return item, _Plan()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver listens with a backlog of 5: a burst of clients connecting at once (a batch of 16
    # agents) had SYNs dropped and waited a second for the retransmit. Real servers take 2048.
    request_queue_size = 1024

    def __init__(self, owner: ScriptedServer):
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is normal here (timeouts, aborts); anything else is a bug that
        assert_complete() reports, instead of a traceback on stderr."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, (ConnectionError, TimeoutError)):
            self.owner.errors.append(f"{type(exc).__name__}: {exc}")


class ScriptedServer:
    """An OpenAI-compatible server on 127.0.0.1 (a free port) that answers from a queue of replies.

    Options: `chunk_size` characters per text/argument delta; `llama_cpp_style` repeats id and name
    in every tool-call delta; `usage=False` never sends usage (with True, a stream carries it only
    when the client asks, through stream_options.include_usage, like OpenAI); `reasoning_field`
    names the Chat Completions delta field of reasoning text; `model` is what /v1/models lists.
    """

    def __init__(
        self,
        *replies: Scripted | str,
        chunk_size: int = 8,
        llama_cpp_style: bool = False,
        usage: bool = True,
        reasoning_field: Literal["reasoning_content", "reasoning"] = "reasoning_content",
        model: str = "scripted-model",
        responder: Callable[[dict[str, Any]], Scripted | str] | None = None,
        prompt_cache: bool = True,
        serves: ServedContext | None = None,
    ):
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        if reasoning_field not in ("reasoning_content", "reasoning"):
            raise ValueError('reasoning_field must be "reasoning_content" or "reasoning"')
        self.options = WireOptions(model, chunk_size, llama_cpp_style, usage, reasoning_field)
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[RecordedRequest] = []
        """Model requests that found the queue empty (answered with a 500 the SDK does not retry)."""
        self.errors: list[str] = []
        """Exceptions raised while answering: a bug in the server or a script it cannot play."""
        self.responder = responder
        """Answers requests that find the queue empty, from the request body: for concurrent sessions,
        whose requests come in no fixed order (``responder(body) -> Reply``, a Fail, Stall, ...)."""
        self.prompt_cache = prompt_cache
        """Report cached prompt tokens as OpenAI does (False: always 0)."""
        self.serves = serves
        """Answer Ollama's or llama.cpp's context endpoints (nbagent.testing.served); None: 404 them."""
        self._cache = PromptCache()
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self.max_connections = 0
        """The most connections that were open at once."""
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.enqueue(*replies)

    # --- the script -------------------------------------------------------------------------

    def enqueue(self, *replies: Scripted | str) -> ScriptedServer:
        items = [as_scripted(r) for r in replies]
        with self._lock:
            self._queue.extend(items)
        return self

    def configure(self, **options: Any) -> ScriptedServer:
        """Change wire options between requests: `server.configure(llama_cpp_style=True)`."""
        self.options = replace(self.options, **options)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def last(self) -> RecordedRequest:
        if not self.requests:
            raise AssertionError("the scripted server has received no request")
        return self.requests[-1]

    def model_requests(self, api: str | None = None) -> list[RecordedRequest]:
        """The requests to the model endpoints (`api="chat"`, `"responses"`, `"completions"` or `"infill"`
        for one of them)."""
        return [r for r in self.requests if r.api and (api is None or r.api == api)]

    def assert_complete(self) -> None:
        """Every scripted reply was used, no request found the queue empty, nothing went wrong."""
        problems = []
        if self.pending:
            problems.append(f"{self.pending} scripted replies were never requested")
        if self.unexpected:
            problems.append(f"{len(self.unexpected)} requests came after the script ran out")
        problems += [f"server error: {e}" for e in self.errors]
        if problems:
            raise AssertionError("; ".join(problems))

    def cached_tokens(self, body: dict[str, Any]) -> int:
        """What this request finds in the prompt cache, which then holds its prompt too."""
        text = prompt_text(body)
        with self._lock:
            shared = self._cache.shared_chars(text)
        return openai_cached_tokens(shared, len(text) // 4) if self.prompt_cache else 0

    def _next(self, body: dict[str, Any]) -> Scripted | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return as_scripted(self.responder(body)) if self.responder is not None else None

    # --- lifetime ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base_url to give an OpenAI client: http://127.0.0.1:PORT/v1."""
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running: call start() or use `with`")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(self)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name="nbagent-scripted-server", daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: wakes stalled answers and closes every open connection."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the client
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def open_connections(self) -> int:
        """Connections open now: a client that hung up mid-stream is off this count once its answer's
        next write failed."""
        with self._lock:
            return len(self._connections)

    def _pause(self, seconds: float) -> bool:
        """Sleep, but wake when the server closes; True if it is closing."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()

    def _track(self, conn: socket.socket, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(conn)
                self.max_connections = max(self.max_connections, len(self._connections))
            else:
                self._connections.discard(conn)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and chunked transfer so a dropped stream is visible
    server_version = "nbagent-scripted/1"

    @property
    def owner(self) -> ScriptedServer:
        return self.server.owner  # type: ignore[attr-defined]  # always a _HTTPServer

    def setup(self) -> None:
        # Without TCP_NODELAY a request body sent in two writes waits ~40 ms for a delayed ACK
        # (Nagle), which would dwarf every latency a test or benchmark measures through this server.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()
        self.owner._track(self.connection, True)

    def finish(self) -> None:
        self.owner._track(self.connection, False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read .requests; access logs on stderr would only add noise

    # --- routing ----------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        self._record(None, None)
        served = self.owner.serves.answer("GET", path, None) if self.owner.serves else None
        if served is not None:
            self._send_json(*served)
        elif path == "/v1/models":
            model = {"id": self.owner.options.model, "object": "model", "created": now(),
                     "owned_by": "nbagent-testing"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_error(Fail(404, f"Invalid URL (GET {path})", code="unknown_url"), None)

    def do_POST(self) -> None:
        self._current: RecordedRequest | None = None
        try:
            self._answer_post()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a timeout, an abort): fine
            if self._current is not None:
                self._current.hung_up = time.time()
        except Exception as exc:  # a bug here must fail the test, not hang it
            self.owner.errors.append(f"{type(exc).__name__}: {exc}")
            self.close_connection = True

    def _answer_post(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        route = _ROUTES.get(path)
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        record = self._record(body, route[0] if route else None, raw)
        self._current = record
        served = self.owner.serves.answer("POST", path, body) if self.owner.serves else None
        if served is not None:
            return self._send_json(*served)
        if route is None:
            return self._send_error(Fail(404, f"Invalid URL (POST {path})", code="unknown_url"), body)
        if not isinstance(body, dict):
            return self._send_error(Fail(400, "We could not parse the JSON body of your request."), None)
        item = self.owner._next(body)
        if item is None:
            self.owner.unexpected.append(record)
            message = f"ScriptedServer: no reply scripted for request {len(self.owner.requests)}"
            return self._send_error(Fail(500, message), body, retry=False)
        if isinstance(item, Fail):
            return self._send_error(item, body)
        if isinstance(item, Recorded):
            return self._send_recorded(item)
        _, stream, complete = route
        reply, plan = _unwrap(item)
        # The prompt cache is asked when the usage is sent, at the end, as a provider counts it; once.
        cached = functools.lru_cache(maxsize=1)(lambda: self.owner.cached_tokens(body))
        if self.owner.serves is not None:
            self.owner.serves.loaded = True
        extra = (cached,) if route[0] in _PROMPT_CACHED else ()
        if body.get("stream"):
            self._send_stream(stream(reply, body, self.owner.options, *extra), plan, record)
        else:
            self._send_whole(complete(reply, body, self.owner.options, *extra), plan)

    def _record(self, body: Any, api: str | None, raw: bytes = b"") -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        body = body if isinstance(body, dict) else None
        peer = ":".join(str(part) for part in self.client_address[:2])
        record = RecordedRequest(self.command, self.path, headers, body, api, raw, peer, time.time())
        self.owner.requests.append(record)
        return record

    # --- sending ----------------------------------------------------------------------------

    def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, fail: Fail, body: dict[str, Any] | None, retry: bool | None = None) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        extra, payload = error_response(fail, body, headers)
        if retry is not None:
            extra["x-should-retry"] = "true" if retry else "false"
        self._send_json(fail.status, payload, extra)

    def _send_stream(self, events: list[SSE], plan: _Plan, record: RecordedRequest | None = None) -> None:
        if plan.stall_after == 0 and self.owner._pause(plan.stall_seconds):
            return self._drop()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for sent, event in enumerate(events):
            if sent == plan.break_after:
                return self._drop()
            if sent and sent == plan.stall_after and self.owner._pause(plan.stall_seconds):
                return self._drop()
            if plan.delay and self.owner._pause(plan.delay):
                return self._drop()
            self._write_chunk(event.encode())
            if record is not None and record.first_sent is None:
                record.first_sent = time.time()
        self._write_chunk(b"")  # the zero-length chunk that ends the body

    def _send_recorded(self, recorded: Recorded) -> None:
        """A real provider's recorded body, byte for byte, each piece between cuts flushed on its own."""
        self.send_response(200)
        if recorded.stream:
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
        else:
            self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for piece in recorded.pieces():
            self._write_chunk(piece)
        self._write_chunk(b"")

    def _send_whole(self, payload: dict[str, Any], plan: _Plan) -> None:
        """A non-streamed answer: a stall or pause delays it, a break cuts its body in half."""
        if self.owner._pause(plan.stall_seconds if plan.stall_after is not None else plan.delay):
            return self._drop()
        if plan.break_after is None:
            return self._send_json(200, payload)
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self._drop()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Cut the connection mid-answer, as a crashing server or a broken proxy would."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # the client already left
