"""nbagent as an Agent Client Protocol agent (``nbagent acp``): editors and Jupyter AI talk to it over stdio.

``main()`` serves one client on stdin and stdout until the client closes stdin. stdout carries only the
protocol: whatever else would be written to it (a print, a child process's output) goes to stderr. The
first ``initialize`` is answered at once (``handshake``); then a thread imports the SDK and the engine.
Needs the ``agent-client-protocol`` package (``pip install "jupyter-nbagent[acp]"``). See docs/acp.md.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any, cast

SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the interpreter while another waits for it."""
LINE_LIMIT = 50 * 1024 * 1024
"""The longest message read (a prompt with embedded files is one JSON line): the SDK's own default."""


def main() -> int:
    """Serve one ACP client on this process's stdin and stdout; returns the exit code."""
    # The agent's thread streams the model's answer while this one sends it on: a shorter hand-over of the
    # interpreter between threads (Python's default is 5 ms) lets each chunk leave as soon as it is there
    # (two agents side by side, with and without, on a loaded machine: the first chunk 9-12 ms sooner).
    sys.setswitchinterval(SWITCH_INTERVAL)
    out_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray writes to fd 1 land on stderr
    sys.stdout = sys.stderr
    from .handshake import answer

    first, rest = _first_line(sys.stdin.fileno())
    if not first:
        return 0
    reply, client_capabilities = answer(first)
    if reply is not None:
        os.write(out_fd, reply)
    # Started only now: its imports would hold the interpreter while the answer is written. A client reads
    # the answer before it sends anything else, so the imports are not later for it.
    loader = threading.Thread(target=_load, name="nbagent-acp-load", daemon=True)
    loader.start()
    try:
        asyncio.run(_serve(os.fdopen(out_fd, "wb", buffering=0), loader, rest if reply else first + rest,
                           client_capabilities))
    except KeyboardInterrupt:
        return 130
    return 0


def _first_line(fd: int) -> tuple[bytes, bytes]:
    """The client's first message, and what came after it in the same reads (the event loop's reader gets
    that first)."""
    data = bytearray()
    while b"\n" not in data:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return bytes(data), b""
        data += chunk
    end = data.index(b"\n") + 1
    return bytes(data[:end]), bytes(data[end:])


def _load() -> None:
    """The SDK, the translator and then the engine, imported while the client reads the handshake."""
    try:
        import acp  # noqa: F401

        from . import server  # noqa: F401
    except ImportError:
        return  # reported where it is used
    from ..engine import warmup

    warmup.start()


async def _serve(protocol_out, loader: threading.Thread, pending: bytes | None,
                 client_capabilities: dict[str, Any] | None) -> None:
    await asyncio.to_thread(loader.join)
    from acp import run_agent

    from .server import NbagentAcpAgent

    reader, writer = await _streams(protocol_out, pending)
    agent = NbagentAcpAgent()
    if client_capabilities is not None:
        agent.remember_client(client_capabilities)
    try:
        # cast: the SDK's Agent protocol lists its unstable methods too (fork, resume, close), which nbagent
        # does not offer; its router answers "method not found" for them.
        await run_agent(cast(Any, agent), writer, reader)
    finally:
        await agent.close()


class _WritePipe(asyncio.streams.FlowControlMixin):
    """The protocol of the pipe the answers go out on (a StreamWriter needs one that can drain)."""


class _FileTransport(asyncio.WriteTransport):
    """Answers written straight to a regular file (stdout redirected to one: a log of the session), which
    the event loop's pipe transport refuses."""

    def __init__(self, out) -> None:
        super().__init__()
        self._out = out
        self._closing = False

    def write(self, data) -> None:
        self._out.write(data)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True


async def _streams(protocol_out, pending: bytes | None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    if pending:
        reader.feed_data(pending)  # the first line was not initialize: the SDK answers it
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        transport, protocol = await loop.connect_write_pipe(_WritePipe, protocol_out)
    except ValueError:  # not a pipe, socket or terminal
        transport, protocol = _FileTransport(protocol_out), _WritePipe()
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)
