"""The sandbox's way to the network: an HTTP/HTTPS (CONNECT) proxy that lets through the allowed hosts only.

A sandboxed process has no network of its own (bubblewrap: a new network namespace; Landlock: TCP
connect refused but to one port). Where the user allowed hosts (``sandbox_hosts``, their own
configuration only: never a workspace file), each sandboxed process gets a gate in this process's
proxy: under bubblewrap a Unix socket bound into the sandbox, where ``net_relay`` listens on
127.0.0.1 and relays to it; under Landlock a 127.0.0.1 port, the only one the process may connect
to. ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``ALL_PROXY`` point there. A host not on the list is
refused (403, saying why) and recorded on the gate, so the tool result reports it as blocked;
where the agent can ask, the gate asks first (``ask``), with the command and the host as the reason.

Hand-written rather than a proxy package: the decision is per sandboxed process (the socket a
connection arrives on says whose it is, and so whom to report to and ask), asking waits on the
agent's own approvals (an awaitable on its loop), and a gate must open in well under a millisecond
per command. proxy.py, the maintained candidate, runs one listener with its own acceptor threads or
processes and synchronous plugins; pproxy has had no release since January 2024.

A gate lives while its process does: the process holds a connection open (``HOLD``; the relay, or
an inherited descriptor of the Landlock launcher) and the gate closes when the last one ends, or
after ``UNCLAIMED_SECONDS`` when none came (the process never started).
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import shutil
import socket
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

HOLD = b"NBAGENT-HOLD\n"
"""What a holder sends first: the gate stays open while it keeps the connection."""
UNCLAIMED_SECONDS = 60.0
HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT = 15.0

Ask = Callable[[str, int], Awaitable[bool]]
"""Asks the user whether a host (and port) not on the list may be reached: True to let it through."""


def host_allowed(patterns: tuple[str, ...] | list[str], host: str, port: int) -> bool:
    """Whether ``host:port`` matches one of ``patterns``: ``example.com`` (any port), ``example.com:443``,
    ``*.example.com`` (its subdomains, not itself), IPs as written. Names compare case-insensitively."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        name, _, want = pattern.strip().lower().rpartition(":") if _has_port(pattern) else (pattern.strip().lower(), "", "")
        if want and want != str(port):
            continue
        name = name.strip("[]").rstrip(".")
        if name.startswith("*.") and fnmatch.fnmatchcase(host, name) and host != name[2:]:
            return True
        if host == name:
            return True
    return False


def _has_port(pattern: str) -> bool:
    head, sep, tail = pattern.strip().rpartition(":")
    return bool(sep) and tail.isdigit() and (not head.count(":") or head.endswith("]"))


@dataclass
class Gate:
    """One sandboxed process's way out: its allowed hosts, who to ask about others, what was refused."""

    hosts: tuple[str, ...]
    ask: Ask | None = None
    command: str = ""
    """What runs behind the gate (shown when asking)."""
    address: str = ""
    """The Unix socket's path, or ``127.0.0.1:PORT``."""
    blocked: list[str] = field(default_factory=list)
    """``host:port`` refused, in order, each once."""
    granted: set[tuple[str, int]] = field(default_factory=set)
    _holders: int = 0
    _claimed: bool = False
    _asking: set = field(default_factory=set)
    """The questions in flight: cancelled when the gate closes (the process ended, or was stopped)."""
    _server: asyncio.AbstractServer | None = None
    _folder: str = ""

    @property
    def port(self) -> int:
        return int(self.address.rpartition(":")[2]) if not self.address.startswith("/") else 0

    def blocked_note(self) -> str:
        """The line a tool result adds for the hosts refused, or ""."""
        if not self.blocked:
            return ""
        return (f"\n[sandbox: BLOCKED network to {', '.join(self.blocked)}: not on the user's host allow-list "
                "(sandbox_hosts); the user may add it there, or the command may be called again with "
                "outside_sandbox and the reason (the user is asked)]")

    async def _allows(self, host: str, port: int) -> bool:
        if host_allowed(self.hosts, host, port) or (host.lower(), port) in self.granted:
            return True
        if self.ask is not None:
            question = asyncio.ensure_future(self.ask(host, port))
            self._asking.add(question)
            try:
                yes = await question
            except (Exception, asyncio.CancelledError):  # the agent went away, the process ended: refused
                yes = False
            finally:
                self._asking.discard(question)
            if yes:
                self.granted.add((host.lower(), port))
                return True
        where = f"{host}:{port}"
        if where not in self.blocked:
            self.blocked.append(where)
        return False


class Proxy:
    """The proxy of this process: one thread running an asyncio loop, serving every open gate."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="nbagent-sandbox-proxy", daemon=True).start()

    def open(self, gate: Gate, unix: bool) -> Gate:
        """Start serving ``gate`` on a fresh Unix socket (bubblewrap) or 127.0.0.1 port (Landlock)."""
        return asyncio.run_coroutine_threadsafe(self._open(gate, unix), self.loop).result(10)

    async def _open(self, gate: Gate, unix: bool) -> Gate:
        handler = lambda r, w: self._serve(gate, r, w)  # noqa: E731
        if unix:
            gate._folder = tempfile.mkdtemp(prefix="nbagent-net-")  # 0700: ours alone
            path = os.path.join(gate._folder, "proxy.sock")
            gate._server = await asyncio.start_unix_server(handler, path)
            gate.address = path
        else:
            gate._server = await asyncio.start_server(handler, "127.0.0.1", 0)
            gate.address = f"127.0.0.1:{gate._server.sockets[0].getsockname()[1]}"
        self.loop.call_later(UNCLAIMED_SECONDS, lambda: gate._claimed or asyncio.ensure_future(self._close(gate)))
        return gate

    async def _close(self, gate: Gate) -> None:
        server, gate._server = gate._server, None
        if server is not None:
            server.close()
        for question in list(gate._asking):
            question.cancel()
        if gate._folder:
            shutil.rmtree(gate._folder, ignore_errors=True)

    async def _serve(self, gate: Gate, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\n")
            if head == HOLD:
                await self._hold(gate, reader)
                return
            while not head.endswith((b"\r\n\r\n", b"\n\n")):  # the request line, then headers to a blank line
                head += await reader.readuntil(b"\n")
                if len(head) > HEAD_LIMIT:
                    raise ValueError("request head too long")
            await self._request(gate, head.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"), reader, writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, OSError, ValueError):
            pass
        finally:
            writer.close()

    async def _hold(self, gate: Gate, reader: asyncio.StreamReader) -> None:
        gate._claimed = True
        gate._holders += 1
        try:
            await reader.read()  # until the process (and every child holding it) is gone
        finally:
            gate._holders -= 1
            if gate._holders == 0:
                await self._close(gate)

    async def _request(self, gate: Gate, head: bytes, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        method, target, version, rest = _parse_head(head)
        if method == "CONNECT":
            host, port = _split_host_port(target, 443)
            forward = b""
        else:
            host, port, path = _absolute_url(target)
            forward = f"{method} {path} {version}\r\n".encode() + _drop_proxy_headers(rest)
        if not await gate._allows(host, port):
            body = (f"nbagent sandbox: {host}:{port} is not on the host allow-list (sandbox_hosts)\n").encode()
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                         + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            writer.write(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n"
                         f"X-Nbagent-Error: {type(exc).__name__}\r\n\r\n".encode())
            await writer.drain()
            return
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(forward)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


def _parse_head(head: bytes) -> tuple[str, str, str, bytes]:
    line, _, rest = head.partition(b"\r\n")
    method, target, version = line.decode("latin-1").split(" ", 2)
    return method.upper(), target, version.strip(), rest


def _split_host_port(authority: str, default: int) -> tuple[str, int]:
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        return host, int(tail[1:]) if tail.startswith(":") else default
    host, sep, port = authority.rpartition(":")
    return (host, int(port)) if sep and port.isdigit() else (authority, default)


def _absolute_url(target: str) -> tuple[str, int, str]:
    """A plain-HTTP proxy request's ``http://host[:port]/path`` as host, port and the origin-form path."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() != "http":
        raise ValueError(f"not an absolute http URL: {target!r}")
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2]  # credentials in the URL go nowhere
    host, port = _split_host_port(authority, 80)
    return host, port, "/" + path if slash else "/"


def _drop_proxy_headers(rest: bytes) -> bytes:
    lines = rest.split(b"\r\n")
    return b"\r\n".join(line for line in lines if not line.lower().startswith((b"proxy-", b"connection:"))
                        ).rstrip(b"\r\n") + b"\r\nConnection: close\r\n\r\n"


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction of a relayed connection until it ends; then close the other side."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


_proxy: Proxy | None = None
_lock = threading.Lock()


def proxy() -> Proxy:
    """This process's proxy, started on first use."""
    global _proxy
    with _lock:
        if _proxy is None:
            _proxy = Proxy()
        return _proxy


def hold(address: str) -> socket.socket:
    """A connection that keeps the gate at ``address`` open while it (or a copy) lives."""
    if address.startswith("/"):
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(address)
    else:
        sock = socket.create_connection(_split_host_port(address, 0))
    sock.sendall(HOLD)
    return sock


def proxy_environment(port: int) -> dict[str, str]:
    """The variables that send HTTP clients through the proxy at 127.0.0.1:``port``."""
    url = f"http://127.0.0.1:{port}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    return {**{name: url for name in names}, "NO_PROXY": "", "no_proxy": ""}


def local_path(gate: Gate) -> Path | None:
    """The Unix socket's folder (bound into a bubblewrap sandbox), or None for a port."""
    return Path(gate._folder) if gate._folder else None
