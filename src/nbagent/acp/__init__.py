"""nbagent as an Agent Client Protocol agent (``nbagent acp``): editors and Jupyter AI talk to it over stdio.

``main()`` serves one client on stdin and stdout until the client closes stdin. stdout carries only the
protocol: whatever else would be written to it (a print, a child process's output) goes to stderr. The
first ``initialize`` is answered at once (``handshake``); then a thread imports the SDK and the engine.
Needs the ``agent-client-protocol`` package (``pip install "jupyter-nbagent[acp]"``). See docs/acp.md.
"""

from __future__ import annotations

import os
import sys
import threading

SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the interpreter while another waits for it."""


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
    import asyncio  # not before the answer: the handshake needs none of it

    from .stdio import serve

    try:
        asyncio.run(serve(os.fdopen(out_fd, "wb", buffering=0), loader, rest if reply else first + rest,
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
