"""``nbagent acp`` driven as a subprocess by the SDK's own client, behind the scripted OpenAI-compatible server.

``AcpRun`` starts ``python -m nbagent.cli acp`` with ``acp.spawn_agent_process`` and records what the agent
sends: every message is checked against the SDK's models (validated, and dumped back to exactly what was
sent, so a field the schema does not know fails too). ``RecordingClient`` is the client side: it keeps the
session updates and answers permission requests from a script.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from contextlib import asynccontextmanager
from typing import Any

import pytest

acp = pytest.importorskip("acp")
from acp import schema as s  # noqa: E402
from acp.connection import StreamDirection, StreamEvent  # noqa: E402

RESPONSES = {"initialize": s.InitializeResponse, "session/new": s.NewSessionResponse,
             "session/load": s.LoadSessionResponse, "session/prompt": s.PromptResponse,
             "session/set_mode": s.SetSessionModeResponse, "session/list": s.ListSessionsResponse,
             "session/set_config_option": s.SetSessionConfigOptionResponse}
REQUESTS = {"session/update": s.SessionNotification, "session/request_permission": s.RequestPermissionRequest,
            "fs/read_text_file": s.ReadTextFileRequest, "fs/write_text_file": s.WriteTextFileRequest,
            "terminal/create": s.CreateTerminalRequest, "terminal/output": s.TerminalOutputRequest,
            "terminal/wait_for_exit": s.WaitForTerminalExitRequest, "terminal/kill": s.KillTerminalRequest,
            "terminal/release": s.ReleaseTerminalRequest}


def check_against_schema(model: type, payload: dict[str, Any]) -> None:
    parsed = model.model_validate(payload)
    again = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert again == payload, f"{model.__name__}: sent {payload}, the schema reads {again}"


class SchemaCheck:
    """A stream observer: every message the agent sends, checked against the SDK's model for it."""

    def __init__(self) -> None:
        self.sent_methods: dict[Any, str] = {}
        self.checked = 0
        self.problems: list[str] = []

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.sent_methods[message["id"]] = message["method"]
            return
        try:
            if "method" in message:
                check_against_schema(REQUESTS[message["method"]], message.get("params") or {})
            elif "result" in message:
                method = self.sent_methods[message["id"]]
                if message["result"] not in (None, {}) or method not in ("session/set_mode", "session/load"):
                    check_against_schema(RESPONSES[method], message["result"])
            self.checked += 1
        except Exception as exc:  # noted, and failed at the end of the run
            self.problems.append(f"{message}: {exc}")


class RecordingClient:
    """The client side: keeps every session update and answers permission requests in order."""

    def __init__(self, answers: list[str] | None = None, buffers: dict[str, str] | None = None,
                 writes: bool = False, saves: tuple[str, ...] = (), terminals: bool = False):
        self.buffers = dict(buffers or {})
        """Files open in the client's editor with unsaved text (offered as fs/read_text_file when given)."""
        self.writes: list[tuple[str, str]] | None = [] if writes else None
        """fs/write_text_file calls (offered when ``writes``): into ``buffers``, saved to disk for ``saves``."""
        self.saves = saves
        self.terminals: dict[str, "Terminal"] | None = {} if terminals else None
        """The terminals the agent created (offered when ``terminals``): real processes of this client."""
        self.terminal_calls: list[str] = []
        self.reads: list[str] = []
        self.updates: list[Any] = []
        self.permissions: list[s.RequestPermissionRequest] = []
        self.answers = list(answers or [])
        self.first_chunk = asyncio.Event()
        self.chunk_times: list[float] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if isinstance(update, s.AgentMessageChunk):
            self.chunk_times.append(asyncio.get_running_loop().time())
            self.first_chunk.set()

    async def request_permission(self, session_id: str, tool_call: s.ToolCallUpdate,
                                 options: list[s.PermissionOption], **kwargs: Any) -> s.RequestPermissionResponse:
        self.permissions.append(s.RequestPermissionRequest(session_id=session_id, tool_call=tool_call,
                                                           options=options))
        if not self.answers:
            return s.RequestPermissionResponse(outcome=s.DeniedOutcome(outcome="cancelled"))
        return s.RequestPermissionResponse(outcome=s.AllowedOutcome(outcome="selected",
                                                                     option_id=self.answers.pop(0)))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> s.ReadTextFileResponse:
        self.reads.append(path)
        if path not in self.buffers:
            raise acp.RequestError.resource_not_found(path)
        return s.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> s.WriteTextFileResponse:
        assert self.writes is not None, "the client did not offer fs/write_text_file"
        self.writes.append((path, content))
        self.buffers[path] = content
        if path in self.saves:
            with open(path, "w") as f:
                f.write(content)
        return s.WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: Any = None, cwd: str | None = None, output_byte_limit: int | None = None,
                              **kwargs: Any) -> s.CreateTerminalResponse:
        assert self.terminals is not None, "the client did not offer terminals"
        process = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd,
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.STDOUT,
                                                       stdin=asyncio.subprocess.DEVNULL, start_new_session=True)
        terminal_id = f"term_{len(self.terminals)}"
        self.terminals[terminal_id] = Terminal(command, list(args or []), cwd, process)
        self.terminal_calls.append(f"create {terminal_id}")
        return s.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> s.WaitForTerminalExitResponse:
        code = await self.terminals[terminal_id].process.wait()
        return s.WaitForTerminalExitResponse(exit_code=code if code >= 0 else None,
                                             signal=f"signal {-code}" if code < 0 else None)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> s.TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        self.terminal_calls.append(f"output {terminal_id}")
        code = terminal.process.returncode
        status = None if code is None else s.TerminalExitStatus(exit_code=code if code >= 0 else None,
                                                                 signal=f"signal {-code}" if code < 0 else None)
        return s.TerminalOutputResponse(output=await terminal.output(), truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> s.KillTerminalResponse:
        self.terminal_calls.append(f"kill {terminal_id}")
        process = self.terminals[terminal_id].process
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)  # the command's children too (they hold the output pipe)
            await process.wait()
        return s.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> s.ReleaseTerminalResponse:
        self.terminal_calls.append(f"release {terminal_id}")
        return s.ReleaseTerminalResponse()

    def capabilities(self) -> s.ClientCapabilities:
        return s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=bool(self.buffers),
                                                                write_text_file=self.writes is not None),
                                    terminal=self.terminals is not None)

    def of(self, kind: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]

    def text(self, kind: type = s.AgentMessageChunk) -> str:
        return "".join(u.content.text for u in self.of(kind))

    def tool_events(self, call_id: str) -> list[Any]:
        return [u for u in self.updates if isinstance(u, (s.ToolCallStart, s.ToolCallProgress))
                and u.tool_call_id == call_id]

    def on_connect(self, conn: Any) -> None:
        pass


class Terminal:
    """One terminal of the test client: a real process, its output read as it comes."""

    def __init__(self, command: str, args: list[str], cwd: str | None, process: asyncio.subprocess.Process):
        self.command, self.args, self.cwd, self.process = command, args, cwd, process
        self._chunks: list[bytes] = []
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(1 << 16):
            self._chunks.append(chunk)

    async def output(self) -> str:
        if self.process.returncode is not None:
            await self._reader
        return b"".join(self._chunks).decode(errors="replace")


def agent_env(server, **more: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test",
            "NBAGENT_MODEL": "scripted-model", "NBAGENT_MAX_RETRIES": "0", **more}


@asynccontextmanager
async def acp_agent(client: RecordingClient, server, log_path, **env: str):
    """``nbagent acp`` in a subprocess, initialized, with the schema check on; yields (connection, check)."""
    check = SchemaCheck()
    with open(log_path, "ab") as log:
        async with acp.spawn_agent_process(client, sys.executable, "-m", "nbagent.cli", "acp",
                                           env=agent_env(server, **env), transport_kwargs={"stderr": log},
                                           observers=[check]) as (conn, process):
            init = await asyncio.wait_for(conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client.capabilities(),
                client_info=s.Implementation(name="test-client", version="0")), 60)
            assert init.protocol_version == acp.PROTOCOL_VERSION
            yield conn, check
    assert not check.problems, "\n".join(check.problems)
    assert process.returncode is not None
