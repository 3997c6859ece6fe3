"""The protocol's pipes for ``nbagent acp``: stdin read by the event loop, answers written to the saved stdout.

``serve`` waits for the import thread, wraps the two pipes in asyncio streams (the client's first line, when
it was not ``initialize``, is fed to the reader first) and runs the SDK's agent connection until stdin closes.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any, cast

LINE_LIMIT = 50 * 1024 * 1024
"""The longest message read (a prompt with embedded files is one JSON line): the SDK's own default."""


async def serve(protocol_out, loader: threading.Thread, pending: bytes | None,
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
