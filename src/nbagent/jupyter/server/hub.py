"""SessionHub: one Agent per open session, its events fanned out to every connected client.

The agent calls its subscribers on its own worker thread. The hub never touches
a socket there: it queues the event and hops onto the server's event loop with
``call_soon_threadsafe`` (once per burst, not once per delta), where the events
are recorded for late joiners and written to every client.

Each WebSocket frame carries one or more events, one JSON object per line.
A client that connects mid-turn first gets a ``snapshot`` (the stored transcript
up to the end of the last finished turn, todos, counters), then the events of the
turn in flight and the prompts still queued, so every tab shows the same thing:
a pending approval card included.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from ...events import Event
from ...open_context import BadContext, OpenContext, with_context

log = logging.getLogger("nbagent.server")

DECISIONS = ("approve", "deny", "always")
FLUSH_BATCH = 200
"""Events sent per loop iteration at most (bench/server.py: keeps the loop's p99 lag low)."""
BACKLOG = 1000
"""Undelivered events at which the agent's thread waits for the server loop to catch up."""


class Client(Protocol):
    """What the hub needs of a connection (the WebSocket handler)."""

    def send_text(self, text: str) -> None: ...

    def close(self, code: int | None = None, reason: str | None = None) -> None: ...


@dataclass
class LiveSession:
    session_id: str
    agent: Any
    clients: set = field(default_factory=set)
    boundary: int = 0
    """Messages up to here belong to finished turns (the snapshot's transcript)."""
    turn_events: list[Any] | None = None
    """Events of the turn in flight, replayed to a client that joins mid-turn (deltas merged)."""
    queued: list[str] = field(default_factory=list)
    pending: list[tuple[dict[str, Any], int | None]] = field(default_factory=list)
    flush_scheduled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    drained: threading.Event = field(default_factory=threading.Event)
    """Clear while the backlog is over BACKLOG: the agent's thread then waits (back-pressure)."""
    stale: bool = False
    """Settings changed since the agent was made: it is remade before the next prompt."""
    unsubscribe: Callable[[], None] | None = None
    close_timer: asyncio.TimerHandle | None = None


class SessionHub:
    """Open sessions of one server. All methods run on the server's event loop."""

    def __init__(self, make_agent: Callable[[str], Any], executor: Executor, *, idle_close: float = 60.0):
        self.make_agent = make_agent
        """Builds the Agent of a session id (blocking: runs in ``executor``)."""
        self.executor = executor
        self.idle_close = idle_close
        self.live: dict[str, LiveSession] = {}
        self._opening: dict[str, asyncio.Future] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.before_prompt: Callable[[str, Any], Awaitable[None]] | None = None
        """Awaited with (session id, the prompt's OpenContext or None) before a prompt is queued: the
        attached context offers the active notebook there. It must not raise."""

    # ----- clients -----------------------------------------------------------------------
    async def attach(self, session_id: str, client: Client) -> LiveSession:
        """Connect ``client`` to a session (opening its agent if needed) and bring it up to date."""
        live = await self._open(session_id)
        if live.close_timer is not None:
            live.close_timer.cancel()
            live.close_timer = None
        live.clients.add(client)
        for text in self._catch_up(live):
            client.send_text(text)
        return live

    def detach(self, session_id: str, client: Client) -> None:
        live = self.live.get(session_id)
        if live is None:
            return
        live.clients.discard(client)
        if not live.clients:
            self._schedule_close(live)

    async def handle(self, session_id: str, message: Any) -> dict[str, Any] | None:
        """Carry out a client's message; returns an error event (as a dict) for that client alone."""
        live = self.live.get(session_id)
        if live is None:
            return _error("this session is not open", "not_found")
        if not isinstance(message, dict):
            return _error("a message must be a JSON object with a \"type\"", "bad_request")
        kind = message.get("type")
        if kind == "prompt":
            text = message.get("text")
            if not isinstance(text, str) or not text.strip():
                return _error("a prompt needs a non-empty \"text\"", "bad_request")
            try:
                context = OpenContext.from_dict(message.get("context"))
            except BadContext as exc:
                return _error(str(exc), "bad_request")
            await self._refresh_if_stale(live)
            if self.before_prompt is not None:
                await self.before_prompt(session_id, context)
            future = live.agent.submit(with_context(text, context), keep_deltas=False)
            future.add_done_callback(_log_failure)
        elif kind == "approval":
            call_id, decision = message.get("call_id"), message.get("decision")
            if not isinstance(call_id, str) or decision not in DECISIONS:
                return _error("an approval needs \"call_id\" and a \"decision\" of approve, deny or always",
                              "bad_request")
            live.agent.decide(call_id, decision)
        elif kind == "stop":
            # Killing a process tree waits for a short grace period: not on the event loop.
            await self._run(live.agent.stop_command)
        elif kind == "abort":
            await self._run(live.agent.abort)
        elif kind in ("undo", "redo"):
            return await self._restore(live, kind, message)
        else:
            return _error(f"unknown message type {kind!r} (prompt, approval, stop, abort, undo, redo)",
                          "bad_request")
        return None

    async def _restore(self, live, kind: str, message: dict) -> dict[str, Any] | None:
        """Undo or redo (the checkpoint event goes to every client); a refusal to this client alone."""
        from ...checkpoints import CheckpointError

        turn, force = message.get("turn"), message.get("force", False)
        if (turn is not None and (not isinstance(turn, int) or isinstance(turn, bool))) or \
                not isinstance(force, bool):
            return _error(f"{kind} takes an optional integer \"turn\" and a boolean \"force\"", "bad_request")
        try:
            await self._run(lambda: getattr(live.agent, kind)(force=force, turn=turn))
        except (CheckpointError, RuntimeError) as exc:  # RuntimeError: a turn is running
            return _error(str(exc), "checkpoint")
        return None

    # ----- sessions ----------------------------------------------------------------------
    def is_open(self, session_id: str) -> bool:
        return session_id in self.live

    def is_busy(self, session_id: str) -> bool:
        live = self.live.get(session_id)
        return bool(live and live.agent.busy)

    async def close(self, session_id: str) -> None:
        """Abort the session's turn and close its agent (a deleted session, server shutdown)."""
        live = self.live.pop(session_id, None)
        if live is None:
            return
        if live.close_timer is not None:
            live.close_timer.cancel()
        if live.unsubscribe:
            live.unsubscribe()
        for client in list(live.clients):
            client.close(1001, "the session was closed")
        await self._run(live.agent.close)

    async def shutdown(self) -> None:
        await asyncio.gather(*(self.close(sid) for sid in list(self.live)), return_exceptions=True)

    def mark_stale(self) -> None:
        """New settings: every open agent is remade before its next prompt."""
        for live in self.live.values():
            live.stale = True

    # ----- internals ---------------------------------------------------------------------
    async def _open(self, session_id: str) -> LiveSession:
        if session_id in self.live:
            return self.live[session_id]
        if session_id in self._opening:  # two tabs connecting at once share one agent
            return await asyncio.shield(self._opening[session_id])
        self._loop = asyncio.get_running_loop()
        future = self._loop.create_future()
        self._opening[session_id] = future
        try:
            agent = await self._run(self.make_agent, session_id)
            live = LiveSession(session_id=agent.session_id, agent=agent)
            live.drained.set()
            live.boundary = len(agent.session.messages)
            live.unsubscribe = agent.subscribe(lambda event: self._on_event(live, event))
            self.live[session_id] = live
            future.set_result(live)
            return live
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here so a lone opener leaves no "never retrieved" warning
            raise
        finally:
            del self._opening[session_id]

    async def _refresh_if_stale(self, live: LiveSession) -> None:
        if not live.stale or live.agent.busy:
            return
        live.stale = False
        old = live.agent
        if live.unsubscribe:
            live.unsubscribe()
        live.agent = await self._run(self.make_agent, live.session_id)
        live.unsubscribe = live.agent.subscribe(lambda event: self._on_event(live, event))
        await self._run(old.close)

    def _on_event(self, live: LiveSession, event: Event) -> None:
        """On the agent's worker thread: queue the event, wake the server loop once per burst."""
        data = event.to_dict()
        # The transcript's length at turn_end, read here: by the time the server loop runs,
        # the next queued turn may already have appended its prompt.
        boundary = len(live.agent.session.messages) if data["type"] == "turn_end" else None
        with live.lock:
            live.pending.append((data, boundary))
            if len(live.pending) >= BACKLOG:
                live.drained.clear()
            wake = not live.flush_scheduled
            live.flush_scheduled = True
        if wake:
            self._loop.call_soon_threadsafe(self._flush, live)
        # Back-pressure: a model streaming faster than the server can send would grow the backlog
        # without bound, and this thread's busy loop would hold the GIL against the server's loop.
        # Waiting here (bounded) lets the server catch up; a real model stream just buffers meanwhile.
        if not live.drained.is_set():
            live.drained.wait(1.0)

    def _flush(self, live: LiveSession) -> None:
        """On the server loop: record and send up to FLUSH_BATCH events, one frame per client.

        A frame holds one event per line (JSON never contains a raw newline). A fast stream is
        sent in slices, each in its own loop iteration, so other requests never wait long.
        """
        with live.lock:
            batch = live.pending[:FLUSH_BATCH]
            del live.pending[:FLUSH_BATCH]
            more = bool(live.pending)
            live.flush_scheduled = more
            if len(live.pending) < BACKLOG // 2:
                live.drained.set()
        lines = []
        for data, boundary in batch:
            self._record(live, data, boundary)
            lines.append(json.dumps(data, default=str))
        frame = "\n".join(lines)
        for client in list(live.clients):
            client.send_text(frame)
        if more:
            self._loop.call_soon(self._flush, live)

    @staticmethod
    def _record(live: LiveSession, data: dict[str, Any], boundary: int | None) -> None:
        kind = data["type"]
        if kind == "prompt_queued":
            live.queued.append(data["prompt"])
            return
        if kind == "turn_start":
            if data["prompt"] in live.queued:
                live.queued.remove(data["prompt"])
            live.turn_events = [data]
            return
        if kind == "turn_end":
            live.turn_events = None
            live.boundary = boundary if boundary is not None else live.boundary
            if data["reason"] == "aborted":
                live.queued.clear()  # abort drops the queue (Agent.abort)
            return
        if live.turn_events is None:
            return
        last = live.turn_events[-1]
        if kind in DELTAS and isinstance(last, _DeltaRun) and last.type == kind:
            last.parts.append(data["text"])  # a late joiner gets one delta per run, not thousands
        elif kind in DELTAS:
            live.turn_events.append(_DeltaRun(kind, data["turn_id"], [data["text"]]))
        else:
            live.turn_events.append(data)

    def _catch_up(self, live: LiveSession) -> list[str]:
        agent = live.agent
        session = agent.session
        snapshot = {
            "type": "snapshot",
            "session_id": live.session_id,
            "title": session.title,
            "messages": session.messages[: live.boundary],
            "todos": agent.todos,
            "usage": {"input_tokens": session.input_tokens, "output_tokens": session.output_tokens,
                      "cost": session.cost},
            "busy": agent.busy,
        }
        replay = [e.as_event() if isinstance(e, _DeltaRun) else e for e in live.turn_events or []]
        replay += [{"type": "prompt_queued", "turn_id": "", "prompt": p, "position": i}
                   for i, p in enumerate(live.queued, start=1)]
        frames = [json.dumps(snapshot, default=str)]
        if replay:
            frames.append("\n".join(json.dumps(e, default=str) for e in replay))
        return frames

    def _schedule_close(self, live: LiveSession) -> None:
        if live.close_timer is not None:
            live.close_timer.cancel()
        loop = asyncio.get_running_loop()
        live.close_timer = loop.call_later(self.idle_close, self._close_if_idle, live.session_id)

    def _close_if_idle(self, session_id: str) -> None:
        live = self.live.get(session_id)
        if live is None or live.clients:
            return
        if live.agent.busy:  # a turn with nobody watching runs to its end (or its approval)
            self._schedule_close(live)
            return
        asyncio.ensure_future(self.close(session_id))

    def _run(self, fn: Callable, *args: Any) -> asyncio.Future:
        return asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)


DELTAS = ("text_delta", "reasoning_delta")


@dataclass
class _DeltaRun:
    """Consecutive deltas of one kind, kept as their parts (few objects for the collector to see)."""

    type: str
    turn_id: str
    parts: list[str]

    def as_event(self) -> dict[str, Any]:
        return {"type": self.type, "turn_id": self.turn_id, "text": "".join(self.parts)}


def _error(message: str, kind: str) -> dict[str, Any]:
    # Shaped like the engine's error event, so the panel shows it like any other.
    return {"type": "error", "turn_id": "", "message": message, "kind": kind, "status_code": None}


def _log_failure(future) -> None:
    exc = future.exception()
    if exc is not None:
        log.error("nbagent turn failed: %s", exc, exc_info=exc)
