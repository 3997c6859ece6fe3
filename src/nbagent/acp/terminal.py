"""The client's terminals for ``bash``: ``terminal/create``, ``wait_for_exit``, ``output``, ``kill``, ``release``.

A command in the client's terminal runs in the editor's process tree and environment, outside nbagent's
sandbox, where the user watches it live. So a ``bash`` call goes there only when it would leave the sandbox
anyway AND the user approved this very call (or chose "allow always" for bash) in a permission request:
where the sandbox holds the command (the default "sandboxed" mode, or any mode on a machine with a
mechanism) or no one was asked ("auto" without a sandbox), it runs in nbagent's own process tree as
always. Background tasks (``task_create``, and ``bash`` handing a slow command over) stay nbagent's own:
their logs, ``task_wait`` and ``task_stop`` need the process. So a command still running at ``bash``'s
timeout is killed rather than handed over, and its result says so.

``run`` is called from the agent's loop; the requests go out on the connection's loop, and a cancelled
call (Stop) kills the terminal there before releasing it.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from acp import schema as s

from .. import events as ev
from ..render.redaction import logger

log = logger("nbagent.acp")

OUTPUT_LIMIT = 1_000_000
"""Bytes of output the client keeps for a command (it drops the oldest beyond): the tool result's source."""
CLEANUP_WAIT = 5.0
"""Seconds a stopped command waits for its terminal's kill and release on the client's side."""
APPROVED_BY = ("user", "always")


class ClientTerminal:
    """``tools.shell.CLIENT_TERMINAL`` for one ACP session: ``takes(call_id)`` and ``run(...)``."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop, session_id: str, terminals: dict[str, str]):
        self.client = client
        self.loop = loop
        self.session_id = session_id
        self.terminals = terminals
        """The translator's call id -> terminal id (so the call's updates embed the terminal)."""
        self._approved: set[str] = set()
        self._lock = threading.Lock()

    def note(self, event: ev.AnyEvent) -> None:
        """An agent subscriber (called on the agent's thread, before the approved call runs)."""
        if isinstance(event, ev.ApprovalDecision) and event.by in APPROVED_BY and event.decision != "deny":
            with self._lock:
                self._approved.add(event.call_id)

    def takes(self, call_id: str) -> bool:
        """Whether this call may run in the client's terminal: the user approved it."""
        with self._lock:
            return call_id in self._approved

    async def run(self, call_id: str, command: str, cwd: Path, limit: float) -> str:
        """Run ``command`` with ``bash -c`` in a terminal of the client; the result text of ``bash``."""
        released = threading.Event()
        future = asyncio.run_coroutine_threadsafe(self._run(call_id, command, cwd, limit, released), self.loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            # Stop: the terminal is killed and released on the client's loop; the turn ends (and the
            # client hears "cancelled") only after that, so the client is never left holding a terminal.
            deadline = asyncio.get_running_loop().time() + CLEANUP_WAIT
            while not released.is_set() and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            raise
        finally:
            with self._lock:
                self._approved.discard(call_id)

    async def _run(self, call_id: str, command: str, cwd: Path, limit: float, released: threading.Event) -> str:
        try:
            return await self._in_terminal(call_id, command, cwd, limit)
        finally:  # after the terminal's release, or when it was never created
            released.set()

    async def _in_terminal(self, call_id: str, command: str, cwd: Path, limit: float) -> str:
        created = await self.client.create_terminal(session_id=self.session_id, command="bash",
                                                    args=["-c", command], cwd=str(cwd),
                                                    output_byte_limit=OUTPUT_LIMIT)
        terminal = created.terminal_id
        self.terminals[call_id] = terminal
        try:
            await self.client.session_update(self.session_id, s.ToolCallProgress(
                session_update="tool_call_update", tool_call_id=call_id, status="in_progress",
                content=[s.TerminalToolCallContent(type="terminal", terminal_id=terminal)]))
            timed_out = False
            try:
                await asyncio.wait_for(self._wait(terminal), limit)
            except asyncio.TimeoutError:
                timed_out = True
                await self._kill(terminal)
            output = await self.client.terminal_output(session_id=self.session_id, terminal_id=terminal)
        except asyncio.CancelledError:  # Stop: the command goes with the turn
            await asyncio.shield(self._kill(terminal))
            raise
        finally:
            await asyncio.shield(self._release(terminal))
        return _result(output, timed_out, limit)

    async def _wait(self, terminal: str) -> None:
        await self.client.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal)

    async def _kill(self, terminal: str) -> None:
        try:
            await self.client.kill_terminal(session_id=self.session_id, terminal_id=terminal)
        except Exception:  # it ended meanwhile, or the client is gone
            log.debug("terminal/kill %s failed", terminal, exc_info=True)

    async def _release(self, terminal: str) -> None:
        try:
            await self.client.release_terminal(session_id=self.session_id, terminal_id=terminal)
        except Exception:
            log.debug("terminal/release %s failed", terminal, exc_info=True)


def _result(output: s.TerminalOutputResponse, timed_out: bool, limit: float) -> str:
    """The text ``bash`` returns: the exit code (or how it ended) and the output, as for its own commands."""
    status = output.exit_status
    if timed_out:
        head = (f"killed at the {limit:g}s limit: it ran in the editor's terminal, which cannot become a "
                "background task (give a longer timeout, or run it with task_create)")
    elif status is not None and status.exit_code is not None:
        head = f"exit code: {status.exit_code}"
    elif status is not None and status.signal:
        head = f"exit code: -1 (killed by {status.signal})"
    else:
        head = "exit code: unknown (the editor did not say)"
    head += "\n(ran in the editor's terminal)"
    if output.truncated:
        head += f"\n[the editor kept only the last {OUTPUT_LIMIT:,} bytes of the output]"
    text = output.output.rstrip("\n")
    return f"{head}\n{text}" if text else f"{head}\n(no output)"
