"""One MCP server connection: started on first use, kept, restarted after a crash, killed if it hangs.

The SDK's transports are anyio context managers that must be entered and left
in one task, so each connection has a runner task that holds the ``mcp.Client``
open until ``close()``; calls are made from the tools' own tasks through it.
A stdio server runs with an extra environment variable carrying a random token,
which is how its process is found among our children (the SDK does not expose
it) so Stop can kill its whole tree when it does not answer a cancelled call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import warnings
from pathlib import Path
from typing import Any

import psutil

from ..errors import ToolError
from ..workspace.procs import ProcessRef, kill_tree
from ..workspace.safe_read import open_regular
from ..workspace.state_dir import open_append, private_dir
from .config import MCPServerConfig

MARK_VARIABLE = "NBAGENT_MCP_SERVER"
PING_GRACE = 1.0
"""Seconds a server has to answer a ping after a cancelled call before its process tree is killed."""


class MCPServerError(ToolError):
    """The server could not be started, or it stopped: the message names it."""


class MCPConnection:
    def __init__(self, config: MCPServerConfig, *, workspace: Path, log_dir: Path, timeout: float):
        self.config = config
        self.workspace = workspace
        self.log_path = log_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', config.name)}.log"
        self.timeout = config.timeout or timeout
        self.status = "stopped"
        """stopped (not started yet), running, failed (could not start), crashed (stopped by itself)."""
        self.error: str | None = None
        self.tools: list[Any] | None = None
        self.tools_changed = False
        """The server sent notifications/tools/list_changed since its tools were last listed."""
        self.server_info: Any = None
        self.client: Any = None
        self.process: ProcessRef | None = None
        self._runner: asyncio.Task | None = None
        self._closing: asyncio.Event | None = None
        self._start_lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.config.name

    # ----- life cycle ------------------------------------------------------------------------
    async def ensure_started(self) -> list[Any]:
        """Start the server if it is not running (again, after a crash); returns its tools."""
        async with self._start_lock:
            if self.status == "running" and not self._process_gone():
                return self.tools or []
            if self.status == "running":
                await self._mark_crashed("its process exited")
            await self._stop_runner()
            ready: asyncio.Future = asyncio.get_running_loop().create_future()
            self._closing = asyncio.Event()
            self._runner = asyncio.ensure_future(self._run(ready))
            try:
                self.tools = await asyncio.wait_for(asyncio.shield(ready), self.timeout)
            except asyncio.TimeoutError:
                await self._stop_runner()
                return self._fail(f"did not start and list its tools within {self.timeout:g} s")
            except Exception as exc:
                await self._stop_runner()
                return self._fail(_describe(exc))
            self.status, self.error = "running", None
            return self.tools or []

    def _fail(self, reason: str) -> list[Any]:
        self.status, self.error = "failed", reason
        raise MCPServerError(f"MCP server {self.name!r} failed to start: {reason}{self._stderr_tail()}")

    async def _run(self, ready: asyncio.Future) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                self.client = await self._connect(stack)
                self.server_info = getattr(self.client, "server_info", None)
                tools = await self._list_all()
                if not ready.done():
                    ready.set_result(tools)
                assert self._closing is not None
                await self._closing.wait()
        except BaseException as exc:  # the runner reports; the caller decides
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else MCPServerError("start cancelled"))
            if not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
        finally:
            self.client = None

    async def _connect(self, stack: contextlib.AsyncExitStack) -> Any:
        from . import sdk_problem

        problem = sdk_problem()
        if problem is not None:
            raise MCPServerError(problem)
        from mcp import Client

        if self.config.command:
            transport = self._stdio_transport()
        else:
            transport = await self._http_transport(stack)
        client = await stack.enter_async_context(Client(transport, mode="legacy",
                                                        message_handler=self._on_message))
        if self.config.command:
            self.process = _find_child(self._token)
        return client

    def _stdio_transport(self) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self._token = secrets.token_hex(8)
        cwd = Path(self.config.cwd).expanduser() if self.config.cwd else self.workspace
        if not cwd.is_absolute():
            cwd = self.workspace / cwd
        # The log folder checked from the state directory down, the log 0600, never a link or a FIFO.
        log = private_dir(self.log_path.parent.parent, self.log_path.parent.name) / self.log_path.name
        errlog = os.fdopen(open_append(log), "a", encoding="utf-8", errors="replace")
        env = {**self.config.env, MARK_VARIABLE: self._token}
        params = StdioServerParameters(command=self.config.command or "", args=list(self.config.args), env=env,
                                       cwd=str(cwd))
        return _closing_after(stdio_client(params, errlog=errlog), errlog)

    async def _http_transport(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.config.headers)))
        return streamable_http_client(self.config.url or "", http_client=http)

    async def _on_message(self, message: Any) -> None:
        """The server's notifications: tools/list_changed marks the tools for listing again (by the
        manager, before the next turn); the rest are not used."""
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self.tools_changed = True

    async def relist(self) -> list[Any]:
        """List a running server's tools again (after tools/list_changed); returns them."""
        client = self.client
        if client is None or self.status != "running":
            return self.tools or []
        self.tools_changed = False  # a notification arriving while listing marks them again
        try:
            self.tools = await asyncio.wait_for(self._list_all(), self.timeout)
        except Exception as exc:
            raise MCPServerError(f"MCP server {self.name!r} said its tools changed but did not list them: "
                                 f"{_describe(exc)}") from None
        return self.tools

    async def _list_all(self) -> list[Any]:
        tools, cursor = [], None
        for _ in range(100):  # a server that pages forever cannot hang the start
            page = await self.client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def close(self) -> None:
        await self._stop_runner()
        if self.status == "running":
            self.status = "stopped"

    async def _stop_runner(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        if self._closing is not None:
            self._closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(runner), 10)
        except (asyncio.TimeoutError, Exception):
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        self.client = None

    # ----- calls -----------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool``; a server that stopped under the call raises MCPServerError naming it."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        await self.ensure_started()
        client = self.client
        if client is None:
            raise MCPServerError(f"MCP server {self.name!r} is not connected; it restarts on the next call")
        try:
            return await client.call_tool(tool, arguments)
        except MCPError as exc:
            if self._process_gone() or exc.code == CONNECTION_CLOSED:
                await self._mark_crashed(exc.message)
                raise MCPServerError(self._crash_message()) from None
            raise ToolError(f"MCP server {self.name!r}: {tool}: {exc.message}") from None
        except Exception as exc:  # the transport failed (a pipe, an HTTP connection): start afresh next time
            await self._mark_crashed(_describe(exc))
            raise MCPServerError(self._crash_message()) from None

    async def _mark_crashed(self, reason: str) -> None:
        self.status, self.error = "crashed", reason
        await self._stop_runner()

    def _crash_message(self) -> str:
        return (f"MCP server {self.name!r} stopped ({self.error}); it will be restarted on the next call"
                f"{self._stderr_tail()}")

    async def settle_after_cancel(self) -> bool:
        """After a cancelled call: ping the server; kill its process tree if it does not answer.

        Returns True when it was killed (it restarts on the next call).
        """
        client = self.client
        if client is None:
            return False
        try:
            with warnings.catch_warnings():  # ping is legacy-era; these connections are legacy-mode
                warnings.simplefilter("ignore")
                await asyncio.wait_for(client.send_ping(), PING_GRACE)
            return False
        except Exception:
            pass
        if self.process is not None:
            await asyncio.to_thread(kill_tree, self.process)
        await self._mark_crashed("killed after a stopped call it did not give up")
        return True

    def _process_gone(self) -> bool:
        return self.config.command is not None and self.process is not None and not self.process.alive()

    def _stderr_tail(self, lines: int = 5) -> str:
        if not self.config.command or not self.log_path.is_file():
            return ""
        try:
            with open_regular(self.log_path) as f:
                f.seek(max(0, f.seek(0, 2) - 2000))
                tail = f.read().decode("utf-8", "replace").splitlines()[-lines:]
        except OSError:
            return ""
        return ("\nlast lines of its stderr:\n" + "\n".join(tail)) if tail else ""


@contextlib.asynccontextmanager
async def _closing_after(transport: Any, handle: Any):
    try:
        async with transport as streams:
            yield streams
    finally:
        handle.close()


def _find_child(token: str) -> ProcessRef | None:
    """Our child process started with ``MARK_VARIABLE=token`` (the stdio server)."""
    for child in psutil.Process().children(recursive=False):
        try:
            if child.environ().get(MARK_VARIABLE) == token:
                return ProcessRef(child.pid, child.create_time())
        except psutil.Error:
            continue
    return None


def _describe(exc: BaseException) -> str:
    """A one-line reason from an exception, unwrapping anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, ToolError) else text
