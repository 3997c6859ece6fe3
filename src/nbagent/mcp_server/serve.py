"""``nbagent mcp serve``: nbagent's notebook, workspace and kernel tools for outside agents, over MCP.

The served tools are the agent's own Tool objects (same validation, same
notebook code path by cell id, same output limits), plus the kernel tools the
Jupyter layer builds for a running kernel it reaches (nbagent.jupyter.remote.kernel_tools); each call goes through the
same ``Approvals`` as an agent's, so nbagent's approval mode gates writes on
this side whatever the outside agent's own approval said: "ask" (the default)
asks on the terminal (/dev/tty, since stdio carries the protocol) and denies
when there is none; "auto" runs them; "read-only" refuses every write.
Served on stdio, or on streamable HTTP bound to localhost behind a bearer token.
"""

from __future__ import annotations

import asyncio
import hmac
import hashlib
import secrets
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from .. import events as ev
from ..tools.approvals import Approvals
from ..config import AgentConfig
from ..errors import ConfigError, ToolError
from ..workspace.procs import ProcessTracker
from ..tools import builtin_toolsets
from ..tools.base import Registry, Tool, ToolSet
from ..tools.context import CALLER, ToolContext
from ..workspace.root import Workspace
from ..workspace.state_dir import OUTPUTS
from ..render.redaction import logger
from ..workers import in_background

log = logger("nbagent.mcp")
DEFAULT_SERVED = ("notebook",)
SERVABLE = ("core", "edit-plus", "git", "notebook")
"""Tool sets that make sense without an agent session (todos, memory and tasks belong to one)."""
SESSION_END_TIMEOUT = 5.0
"""Seconds an ended MCP session's release may take in all (shutdown never waits longer for it)."""


class ServedTools:
    """The tools an outside agent may call, run the way the agent runs them."""

    def __init__(self, workspace: str | Path, *, toolsets: tuple[str, ...] = DEFAULT_SERVED,
                 approval: str = "ask", approver: Callable[[ev.ApprovalRequest], str | Awaitable[str]] | None = None,
                 on_event: Callable[[ev.AnyEvent], None] | None = None,
                 deny_note: str | Callable[[str], str] = "",
                 extra: Sequence[ToolSet] = ()):
        """``extra``: more tool sets served when named in ``toolsets`` (the kernel tools, built by the
        Jupyter layer for a kernel it reaches). ``deny_note``: added to a denial's message (or a function
        of the call's id giving it)."""
        self.extra = list(extra)
        unknown = [t for t in toolsets if t not in SERVABLE and t not in {x.name for x in self.extra}]
        if unknown:
            raise ConfigError(f"cannot serve tool set(s) {', '.join(unknown)}; servable: {', '.join(SERVABLE)} "
                              "(and kernel, with a kernel to serve)")
        self.config = AgentConfig.load(workspace=workspace, approval=approval, toolsets=toolsets, persist=False)
        self.on_event = on_event or (lambda event: None)
        self.deny_note = deny_note
        self.registry = self._registry(toolsets)
        # Tools that always ask (notebook_run: code in a kernel) ask here even with --approval auto.
        self.approvals = Approvals(lambda: self.config, self.on_event, approver or deny_all)
        self.context = ToolContext(workspace=Workspace(self.config.workspace), config=self.config,
                                   emit=self.on_event, processes=ProcessTracker())

    def _registry(self, toolsets: tuple[str, ...]) -> Registry:
        sets = [ts for ts in [*builtin_toolsets(memory=False), *self.extra] if ts.name in toolsets]
        # No set is on unless asked for ("core" holds bash). Said to this registry, not by changing the
        # tool sets: some are shared by every agent of the process (the server's panel agents too).
        return Registry(sets, toolsets, always_on=())

    def tools(self) -> list[Tool]:
        return list(self.registry)

    async def call(self, name: str, arguments: dict[str, Any], *, client: str = "") -> tuple[str, bool]:
        """Run one call; returns (text, is_error). Denials and failures are errors the caller sees.
        ``client``: the MCP session's id, under which a kernel keeps the record of its kernel_run calls
        (none: the served kernel tools' own, one per process)."""
        tool = self.registry.get(name)
        if tool is None:
            return f"unknown tool {name!r}; the tools are: {', '.join(self.registry.names())}", True
        ctx = self.context.for_call(f"mcp_{secrets.token_hex(6)}")
        caller = CALLER.set(client)
        try:
            return await self._call(tool, ctx, name, arguments)
        finally:
            CALLER.reset(caller)

    async def end_session(self, client: str = "") -> None:
        """MCP session ``client`` ended ("": the stdio client): the served tool sets that keep records per
        session (the kernel tools: in the kernels) release them. Best effort, bounded by SESSION_END_TIMEOUT."""
        await self._each("end_session", client)

    async def end_all(self) -> None:
        """The server stops: every session's records are released (best effort, bounded as above)."""
        await self._each("end_all")

    async def _each(self, method: str, *args: Any) -> None:
        calls = [getattr(ts, method)(*args) for ts in self.extra if callable(getattr(ts, method, None))]
        if not calls:
            return
        try:
            await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), SESSION_END_TIMEOUT)
        except asyncio.TimeoutError:
            log.warning("MCP session end: some kernels did not answer the release within %.0f s", SESSION_END_TIMEOUT)

    async def _call(self, tool: Tool, ctx: ToolContext, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        from ..tools.limits import limit_output

        try:
            args = tool.validate(arguments)
            if await self.approvals.decide(tool, ctx, args) == "deny":
                why = self.deny_note(ctx.call_id) if callable(self.deny_note) else self.deny_note
                note = f"; {why}" if why else ""
                return f"denied by the nbagent user ({self.config.approval} mode): {name} did not run{note}", True
            fn_args = (ctx,) if tool.takes_context else ()
            result = (await tool.fn(*fn_args, **args) if tool.is_async
                      else await asyncio.to_thread(tool.fn, *fn_args, **args))
        except ToolError as exc:
            return str(exc), True
        except Exception as exc:  # a tool's bug is the caller's error result, not a dead server
            return f"{name} failed: {type(exc).__name__}: {exc}", True
        text = result if isinstance(result, str) else str(result)
        save_dir = self.context.workspace.state_subdir(OUTPUTS)  # None: a read-only or linked .nbagent
        return limit_output(text, self.config.output_limit, save_dir=save_dir, name=name), False


def deny_all(request: ev.ApprovalRequest) -> str:
    return "deny"


def terminal_approver(request: ev.ApprovalRequest) -> str:
    """Show the approval card and ask on the controlling terminal (stdin and stdout may carry the
    protocol); with no terminal, deny."""
    from ..render.terminal import approval_card
    from ..tools.terminal_approver import TerminalApprover

    unattended = "start nbagent mcp serve with --approval auto"
    try:
        tty = open("/dev/tty", "r+", encoding="utf-8", errors="replace")
    except OSError:
        return TerminalApprover(None, unattended=unattended)(request)
    with tty:
        tty.write("\nnbagent mcp: an outside agent's call\n" + approval_card(request))
        tty.flush()

        def ask(question: str) -> str:
            tty.write(question)
            tty.flush()
            line = tty.readline()
            if not line:
                raise EOFError
            return line

        return TerminalApprover(ask, out=tty, unattended=unattended)(request)


def build_server(served: ServedTools) -> Any:
    """An SDK low-level Server whose tools/list and tools/call are the served tools (raw JSON schemas)."""
    import mcp.types as types
    from mcp.server import Server

    def listing() -> list[Any]:
        return [types.Tool(name=t.name, description=t.description, input_schema=t.parameters,
                           annotations=types.ToolAnnotations(read_only_hint=t.read_only,
                                                             destructive_hint=not t.read_only))
                for t in served.tools()]

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listing())

    def client_of(ctx: Any) -> str:
        headers = getattr(getattr(ctx, "request", None), "headers", None)
        session_id = headers.get("mcp-session-id") if headers is not None else None
        return caller_of(session_id) if session_id else ""

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        text, is_error = await served.call(params.name, dict(params.arguments or {}), client=client_of(ctx))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    def input_schema(name: str) -> Any:
        tool = served.registry.get(name)
        return tool.parameters if tool is not None else None

    return Server("nbagent", version=_version(), instructions=INSTRUCTIONS, on_list_tools=on_list_tools,
                  on_call_tool=on_call_tool, get_tool_input_schema=input_schema)


INSTRUCTIONS = ("nbagent's tools on a Jupyter workspace: read notebooks with notebook_read, then change them "
                "cell by cell by cell id with notebook_edit, notebook_insert, notebook_delete and notebook_move. "
                "Where served, kernel_variables and kernel_inspect read a running kernel's namespace, "
                "kernel_run runs code in it and kernel_undo / kernel_redo take your last kernel_run's change to "
                "its variables back or re-apply it. Changes may need the nbagent user's approval.")


def caller_of(session_id: str) -> str:
    """The call's MCP session on streamable HTTP (its records in a kernel are its own), hashed: the
    session id admits to the session. Calls on stdio have "" (the process serves one client)."""
    return f"mcp_{hashlib.sha256(session_id.encode()).hexdigest()[:16]}"


class SessionEnd:
    """ASGI wrapper: after a DELETE that ended a streamable-HTTP session (the client closing it), that
    session's records are released (``ServedTools.end_session``) in the background, so the DELETE's
    answer never waits for a kernel. A session the SDK ends on its own (its idle timeout) sends no such
    request: its records stay until the kernel's caller limit releases them."""

    def __init__(self, app: Any, served: ServedTools):
        self.app = app
        self.served = served

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        session_id = dict(scope.get("headers") or []).get(b"mcp-session-id", b"").decode("latin-1") \
            if scope["type"] == "http" and scope.get("method") == "DELETE" else ""
        if not session_id:
            await self.app(scope, receive, send)
            return
        status: list[int] = []

        async def watching(message: dict) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        await self.app(scope, receive, watching)
        if status and status[0] < 400:
            in_background(self.served.end_session(caller_of(session_id)))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nbagent")
    except PackageNotFoundError:
        return "0"


async def serve_stdio(served: ServedTools) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(served)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:  # the client closed stdin (or the process is stopping): its records in the kernel go
        await served.end_session("")


def http_app(served: ServedTools, token: str, host: str = "127.0.0.1") -> Any:
    """The streamable HTTP app at /mcp, refusing any request without ``Authorization: Bearer <token>``."""
    app = build_server(served).streamable_http_app(streamable_http_path="/mcp", host=host)
    return BearerGate(SessionEnd(app, served), token)


class BearerGate:
    """ASGI wrapper: 401 unless the bearer token matches (compared in constant time).

    Written by hand because the SDK's own auth is an OAuth resource server (issuer, metadata
    routes); a local server with one shared token needs only this check.
    """

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"),
                                        (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token\n"})
                return
        await self.app(scope, receive, send)


async def serve_http(served: ServedTools, host: str, port: int, token: str,
                     started: Callable[[str], None] | None = None) -> None:
    import uvicorn

    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ToolError("nbagent mcp serve listens on localhost only (127.0.0.1, localhost or ::1)")
    config = uvicorn.Config(http_app(served, token, host), host=host, port=port, log_level="warning",
                            lifespan="on")
    server = uvicorn.Server(config)
    if started is not None:
        started(f"http://{host}:{port}/mcp")
    try:
        await server.serve()
    finally:
        await served.end_all()
