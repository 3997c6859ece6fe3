"""``nbagent acp``: nbagent as an Agent Client Protocol agent over stdio, one nbagent Agent per ACP session.

The client's working directory is the session's workspace and its MCP servers join as tool sets
(``mcp:<name>``, defined like servers given in code: on, and asking before every call unless trusted);
the session id is the nbagent session's, so ``session/load`` reopens it from the session store and
retells it. A prompt runs as a turn of the session's Agent; the turn's events go through the session's
``Translator`` to the client, in order, and the prompt's answer is sent only after its ``turn_end`` went
through the same pump. An ``approval_request`` becomes ``session/request_permission``; ``session/cancel``
aborts the turn (it ends with ``cancelled``). Engine work that blocks (building an Agent, reading the
store) runs in a thread, so one session never holds up another.
"""

from __future__ import annotations

import asyncio
import datetime
import os
from pathlib import Path
from typing import Any, Callable

from acp import RequestError
from acp import schema as s

from .. import events as ev
from ..render.redaction import logger
from . import options
from .handshake import capabilities
from .updates import Translator, replay

log = logger("nbagent.acp")

STOP_REASONS: dict[str, s.StopReason] = {"done": "end_turn", "aborted": "cancelled", "max_steps": "max_turn_requests",
                                         "error": "end_turn"}


class AcpSession:
    """One ACP session: its Agent, the pump that sends the Agent's events to the client, and the
    permission requests in flight."""

    def __init__(self, server: "NbagentAcpAgent", agent: Any, choices: list[str]):
        self.server = server
        self.agent = agent
        self.id: str = agent.session_id
        self.choices = choices
        self.translator = Translator(agent.runtime.workspace.resolve,
                                     lambda: int(getattr(agent.config, "compact_threshold", 0) or 0))
        self.inbox: asyncio.Queue[ev.Event] = asyncio.Queue()
        self.ends: dict[str, asyncio.Future[ev.TurnEnd]] = {}
        self.usage: dict[str, list[ev.Usage]] = {}
        self.asking: set[asyncio.Task] = set()
        self.terminal: Any = None
        """nbagent.acp.terminal.ClientTerminal, when the client offers terminals."""
        self.unsubscribe_terminal: Callable[[], None] = lambda: None
        loop = asyncio.get_running_loop()
        self.unsubscribe = agent.subscribe(lambda e: loop.call_soon_threadsafe(self.inbox.put_nowait, e))
        self.pump = asyncio.ensure_future(self._pump())

    @property
    def model(self) -> str:
        return str(self.agent.config.model or "")

    def config_options(self) -> list[Any]:
        return options.config_options(self.model, self.choices)

    async def send(self, update: Any) -> None:
        await self.server.client.session_update(self.id, update)

    async def _pump(self) -> None:
        while True:
            event = await self.inbox.get()
            try:
                for update in self.translator.updates(event):
                    await self.send(update)
            except Exception:  # a client that went away or refused one update must not stop the turn's end
                log.warning("could not send an update for %s", event.type, exc_info=True)
            if isinstance(event, ev.ApprovalRequest):
                task = asyncio.ensure_future(self._ask(event))
                self.asking.add(task)
                task.add_done_callback(self.asking.discard)
            elif isinstance(event, ev.Usage):
                self.usage.setdefault(event.turn_id, []).append(event)
            elif isinstance(event, ev.TurnEnd):
                waiting = self.ends.pop(event.turn_id, None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(event)

    async def _ask(self, event: ev.ApprovalRequest) -> None:
        try:
            answer = await self.server.client.request_permission(
                session_id=self.id, tool_call=self.translator.permission_call(event), options=list(options.PERMISSIONS))
            decision = options.decision(answer)
        except Exception:  # no answer is no approval
            log.warning("the permission request for %s failed", event.call_id, exc_info=True)
            decision = "deny"
        self.agent.decide(event.call_id, decision)

    async def prompt(self, text: str, turn_id: str) -> s.PromptResponse:
        ended: asyncio.Future[ev.TurnEnd] = asyncio.get_running_loop().create_future()
        self.ends[turn_id] = ended
        self.agent.submit(text, turn_id=turn_id, keep_deltas=False)
        end = await ended
        used = self.usage.pop(turn_id, [])
        usage = None
        if used:
            tokens_in, tokens_out = sum(u.input_tokens for u in used), sum(u.output_tokens for u in used)
            usage = s.Usage(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out,
                            cached_read_tokens=sum(u.cached_tokens for u in used))
        return s.PromptResponse(stop_reason=STOP_REASONS.get(end.reason, "end_turn"), usage=usage)

    async def close(self) -> None:
        self.unsubscribe()
        self.unsubscribe_terminal()
        for task in (self.pump, *self.asking):
            task.cancel()
        await asyncio.to_thread(self.agent.close)


class NbagentAcpAgent:
    """The ACP ``Agent`` interface (acp.interfaces.Agent) over nbagent Agents."""

    def __init__(self) -> None:
        self.client: Any = None
        self.client_capabilities: s.ClientCapabilities | None = None
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    def remember_client(self, capabilities: dict[str, Any]) -> None:
        """The client's capabilities from an ``initialize`` answered before this object existed."""
        self.client_capabilities = s.ClientCapabilities.model_validate(capabilities)

    async def initialize(self, protocol_version: int, client_capabilities: s.ClientCapabilities | None = None,
                         client_info: s.Implementation | None = None, **kwargs: Any) -> s.InitializeResponse:
        self.client_capabilities = client_capabilities
        return s.InitializeResponse.model_validate(capabilities(protocol_version))

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> s.NewSessionResponse:
        session = await self._open(cwd, "new", mcp_servers)
        return s.NewSessionResponse(session_id=session.id, modes=options.mode_state(session.agent.config.approval),
                                    config_options=session.config_options())

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> s.LoadSessionResponse:
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        session = await self._open(cwd, session_id, mcp_servers)
        state = await asyncio.to_thread(session.agent.snapshot)
        for update in replay(state, session.agent.runtime.workspace.resolve):
            await session.send(update)
        return s.LoadSessionResponse(modes=options.mode_state(session.agent.config.approval),
                                     config_options=session.config_options())

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> s.ListSessionsResponse:
        from ..store.sessions import SessionStore

        root = Path(cwd or os.getcwd())

        def read() -> list[Any]:
            with SessionStore(root) as store:
                return list(store.list())

        rows = await asyncio.to_thread(read)
        return s.ListSessionsResponse(sessions=[
            s.SessionInfo(session_id=r.id, cwd=str(root), title=r.title,
                          updated_at=datetime.datetime.fromtimestamp(r.updated, datetime.UTC).isoformat())
            for r in rows])

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> s.SetSessionModeResponse:
        if mode_id not in options.MODE_IDS:
            raise RequestError.invalid_params({"modeId": f"one of {', '.join(options.MODE_IDS)}"})
        await asyncio.to_thread(self._session(session_id).agent.reconfigure, approval=mode_id)
        return s.SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> s.SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id != options.MODEL_OPTION or not isinstance(value, str) or not value.strip():
            raise RequestError.invalid_params({"configId": f"nbagent's option is {options.MODEL_OPTION!r} (a name)"})
        await asyncio.to_thread(session.agent.reconfigure, model=value.strip())
        return s.SetSessionConfigOptionResponse(config_options=session.config_options())

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> s.PromptResponse:
        from ..ids import short_id

        return await self._session(session_id).prompt(prompt_text(prompt), short_id("turn_"))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.agent.abort()

    async def authenticate(self, method_id: str, **kwargs: Any) -> s.AuthenticateResponse | None:
        return None  # nbagent uses its own model configuration: there is nothing to sign in to here

    async def close(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(x.close() for x in sessions), return_exceptions=True)

    # ----- internals ---------------------------------------------------------------------------------
    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no open session {session_id!r}: session/load it"})
        return session

    async def _open(self, cwd: str, selector: str, mcp_servers: list[Any] | None) -> AcpSession:
        from ..engine import warmup
        from ..errors import NbagentError
        from ..model.catalog import model_choices

        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise RequestError.invalid_params({"cwd": f"{cwd} is not an absolute path to a directory"})
        servers = mcp_config(mcp_servers or [])
        await asyncio.to_thread(warmup.settle)  # the engine is imported by one thread at a time
        from ..engine.agent import Agent

        extra: dict[str, Any] = {"mcp_servers": {"mcpServers": servers}} if servers else {}
        from .server_link import server_tools

        kernel_tools = await asyncio.to_thread(server_tools)  # the Jupyter server that started nbagent acp
        if kernel_tools:
            extra["tools"] = kernel_tools
        try:
            agent = await asyncio.to_thread(Agent, workspace=cwd, session=selector, **extra)
        except (NbagentError, KeyError, LookupError) as exc:
            if selector != "new":
                raise RequestError.resource_not_found(selector) from exc
            raise RequestError.internal_error({"message": str(exc)}) from exc
        if servers:
            on = tuple(agent.config.toolsets)
            wanted = tuple(f"mcp:{name}" for name in servers if f"mcp:{name}" not in on)
            if wanted:
                await asyncio.to_thread(agent.reconfigure, toolsets=(*on, *wanted))
        model = str(agent.config.model or "")
        choices = (await model_choices(agent.config, [model])).models if model else []
        session = AcpSession(self, agent, choices)
        self._use_client(session)
        self.sessions[session.id] = session
        return session


    def _use_client(self, session: AcpSession) -> None:
        """The client's file system and terminals for the agent's tools, where the client offers them."""
        offered = self.client_capabilities or s.ClientCapabilities()
        loop, agent = asyncio.get_running_loop(), session.agent
        fs = offered.fs
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            from ..tools.files import EDITOR_TEXT, EDITOR_WRITE
            from .editor import Editor

            editor = Editor(self.client, loop, agent.session_id)
            if fs.read_text_file:
                agent.runtime.set_tool_extra(EDITOR_TEXT, editor.read)
            if fs.write_text_file:
                agent.runtime.set_tool_extra(EDITOR_WRITE, editor.write)
        if offered.terminal:
            from ..tools.shell import CLIENT_TERMINAL
            from .terminal import ClientTerminal

            session.terminal = ClientTerminal(self.client, loop, agent.session_id, session.translator.terminals)
            session.unsubscribe_terminal = agent.subscribe(session.terminal.note)
            agent.runtime.set_tool_extra(CLIENT_TERMINAL, session.terminal)


def mcp_config(servers: list[Any]) -> dict[str, dict[str, Any]]:
    """The client's MCP servers as nbagent's ``mcpServers`` entries (stdio and streamable HTTP; SSE is not
    offered in the capabilities, so a client sends none)."""
    out: dict[str, dict[str, Any]] = {}
    for server in servers:
        if isinstance(server, s.McpServerStdio):
            out[server.name] = {"command": server.command, "args": list(server.args),
                                "env": {e.name: e.value for e in server.env}}
        elif isinstance(server, s.HttpMcpServer):
            out[server.name] = {"url": server.url, "headers": {h.name: h.value for h in server.headers}}
        else:
            raise RequestError.invalid_params({"mcpServers": f"{server.name}: nbagent takes stdio and http servers"})
    return out


def prompt_text(blocks: list[Any]) -> str:
    """A prompt's blocks as the text of one nbagent prompt: the text, a linked resource by its path, an
    embedded text resource as context after it."""
    parts: list[str] = []
    context: list[str] = []
    for block in blocks:
        if isinstance(block, s.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, s.ResourceContentBlock):
            parts.append(_uri_path(block.uri))
        elif isinstance(block, s.EmbeddedResourceContentBlock) and isinstance(block.resource, s.TextResourceContents):
            context.append(f"<context uri=\"{_uri_path(block.resource.uri)}\">\n{block.resource.text}\n</context>")
        else:
            raise RequestError.invalid_params({"prompt": "nbagent takes text, resource links and text resources"})
    return "\n\n".join([" ".join(parts), *context]) if context else " ".join(parts)


def _uri_path(uri: str) -> str:
    return uri.removeprefix("file://")
