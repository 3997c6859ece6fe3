"""SessionHub: one Agent per open session, its events fanned out to every connected client.

The agent calls its subscribers on its own worker thread. The hub never touches
a socket there: it queues the event and hops onto the server's event loop with
``call_soon_threadsafe`` (once per burst, not once per delta), where the events
are sent to every client.

Each WebSocket frame carries one or more events, one JSON object per line. A
client starts from a ``snapshot``: the agent's AgentState (agent_state.py) as
JSON, then applies the events that follow with the same ``reduce`` (the panel's
state.ts follows the same rules). The hub keeps that state for the events it has
sent so far: it starts from the state the agent hands over with the subscription
(``Agent.watch``) and reduces every event as it sends it, so a tab that joins
mid-turn gets exactly the state the others have reached, a pending approval card
included, and no event twice.
"""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

import orjson

from ...render.agent_state import AgentState, reduce
from ...render.redaction import logger
from ...tools.approvals import DECISIONS
from ...errors import NbagentError
from ...events import AnyEvent, ReasoningDelta, TextDelta
from ...engine.open_in_jupyter import BadContext, OpenContext, attached_outputs, with_context
from .settings import session_changes

log = logger("nbagent.server")

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
    state: AgentState
    """The agent's state after the events sent so far: what a joining client starts from."""
    clients: set = field(default_factory=set)
    pending: list[AnyEvent] = field(default_factory=list)
    flush_scheduled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    drained: threading.Event = field(default_factory=threading.Event)
    """Clear while the backlog is over BACKLOG: the agent's thread then waits (back-pressure)."""
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
        self.outside_decide: Callable[[str, str], bool] | None = None
        """Offered each "approval" message first: True when it answered a request that came from outside
        the sessions (an outside agent's call at /nbagent/mcp), which no agent knows."""
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
        client.send_text(json.dumps({"type": "snapshot", "state": live.state.to_dict()}, default=str))
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
                outputs = attached_outputs(message.get("attach"))
            except BadContext as exc:
                return _error(str(exc), "bad_request")
            if self.before_prompt is not None:
                await self.before_prompt(session_id, context)
            return await self._submit(live, with_context(text, context), outputs)
        elif kind == "approval":
            call_id, decision = message.get("call_id"), message.get("decision")
            if not isinstance(call_id, str):
                return _error("an approval needs a \"call_id\" and a \"decision\"", "bad_request")
            if decision in DECISIONS and self.outside_decide is not None and self.outside_decide(call_id, decision):
                return None
            try:
                live.agent.decide(call_id, decision)  # the agent checks the decision
            except (NbagentError, ValueError) as exc:
                return _error(str(exc), "bad_request")
        elif kind == "stop":
            # Killing a process tree waits for a short grace period: not on the event loop.
            await self._run(live.agent.stop_command)
        elif kind == "abort":
            await self._run(live.agent.abort)
        elif kind in ("undo", "redo"):
            return await self._restore(live, kind, message)
        elif kind == "replay":
            return await self._replay(live, message)
        elif kind == "settings":
            return await self._reconfigure_one(live, message)
        else:
            return _error(f"unknown message type {kind!r} (prompt, approval, stop, abort, undo, redo, replay, "
                          "settings)",
                          "bad_request")
        return None

    async def _submit(self, live, prompt: str, outputs: list[dict[str, Any]]) -> dict[str, Any] | None:
        """Queue a prompt; attached outputs are read (images decoded and shrunk) off the event loop."""
        if not outputs:
            live.agent.submit(prompt, keep_deltas=False).add_done_callback(_log_failure)
            return None
        try:
            future = await self._run(lambda: live.agent.submit(prompt, keep_deltas=False, attach=outputs))
        except (TypeError, ValueError) as exc:  # an output that cannot be shown
            return _error(f"the attached output cannot be read: {exc}", "bad_request")
        future.add_done_callback(_log_failure)
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

    async def _replay(self, live, message: dict) -> dict[str, Any] | None:
        """Restart and replay, the panel's confirmed click: the plan the agent's last undo offered (held
        server-side; a message never carries code to run), run in that kernel. The outcome goes to every
        client as a ``kernel_replayed`` event; a refusal (busy kernel, running turn, no plan) to this one."""
        from ...checkpoints import CheckpointError

        turn = message.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool):
            return _error("replay takes the integer \"turn\" whose undo offered the plan", "bad_request")
        if live.agent.replay_offered != turn:
            return _error(f"no restart-and-replay plan is on offer for turn {turn} (undo it again to get one)",
                          "checkpoint")
        try:
            await self._run(live.agent.replay)
        except (CheckpointError, RuntimeError) as exc:  # RuntimeError: a turn is running
            return _error(str(exc), "checkpoint")
        return None

    async def _reconfigure_one(self, live, message: dict) -> dict[str, Any] | None:
        """This session's model or approval mode, changed live the way the kernel's ``%agent --model/--approval``
        does (``Agent.reconfigure``): its settings_changed event reaches every tab of the session."""
        try:
            changes = session_changes(message)
            await self._run(lambda: live.agent.reconfigure(**changes))
        except NbagentError as exc:
            return _error(str(exc), "config")
        return None

    # ----- sessions ----------------------------------------------------------------------
    def is_open(self, session_id: str) -> bool:
        return session_id in self.live

    def is_busy(self, session_id: str) -> bool:
        live = self.live.get(session_id)
        # What the tabs were told (a session list fetched on turn_end must not still say busy).
        return bool(live and live.agent.turn_shown)

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

    async def reconfigure(self, **settings: Any) -> None:
        """New settings for every open agent, applied live (``Agent.reconfigure``): a turn that runs
        takes them at its next step, the approval mode at its very next decision."""
        for live in list(self.live.values()):
            await self._run(lambda agent=live.agent: agent.reconfigure(**settings))

    @property
    def watched(self) -> bool:
        """A panel is connected to some session (someone could answer an approval request)."""
        return any(live.clients for live in self.live.values())

    def broadcast(self, event: AnyEvent) -> None:
        """Send an event that belongs to no session (an outside agent's approval request and its decision)
        to every open session, through each one's state like its own events (a joining tab sees the card)."""
        for live in list(self.live.values()):
            with live.lock:
                live.pending.append(event)
                wake = not live.flush_scheduled
                live.flush_scheduled = True
            if wake and self._loop is not None:
                self._loop.call_soon_threadsafe(self._flush, live)

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
            live = await self._run(self._start, session_id)
            self.live[session_id] = live
            future.set_result(live)
            return live
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here so a lone opener leaves no "never retrieved" warning
            raise
        finally:
            del self._opening[session_id]

    def _start(self, session_id: str) -> LiveSession:
        """On a worker thread: the session's agent, and its state from the moment the hub listens."""
        agent = self.make_agent(session_id)
        live = LiveSession(session_id=agent.session_id, agent=agent, state=AgentState())
        live.drained.set()
        # No event comes before a client sends a prompt, and none can attach before this returns.
        live.state, live.unsubscribe = agent.watch(lambda event: self._on_event(live, event))
        return live

    def _on_event(self, live: LiveSession, event: AnyEvent) -> None:
        """On the agent's worker thread: queue the event, wake the server loop once per burst."""
        with live.lock:
            live.pending.append(event)
            if len(live.pending) >= BACKLOG:
                live.drained.clear()
            wake = not live.flush_scheduled
            live.flush_scheduled = True
        if wake and self._loop is not None:
            self._loop.call_soon_threadsafe(self._flush, live)
        # Back-pressure: a model streaming faster than the server can send would grow the backlog
        # without bound, and this thread's busy loop would hold the GIL against the server's loop.
        # Waiting here (bounded) lets the server catch up; a real model stream just buffers meanwhile.
        if not live.drained.is_set():
            live.drained.wait(1.0)

    def _flush(self, live: LiveSession) -> None:
        """On the server loop: apply and send up to FLUSH_BATCH events, one frame per client.

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
        live.state = _reduce_all(live.state, batch)
        frame = "\n".join(map(_line, batch))
        for client in list(live.clients):
            client.send_text(frame)
        if more and self._loop is not None:
            self._loop.call_soon(self._flush, live)

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


_TEXT = (TextDelta, ReasoningDelta)


def _reduce_all(state: AgentState, batch: list[AnyEvent]) -> AgentState:
    """``reduce`` over the batch, a run of text (or reasoning) deltas of one turn as one delta: the state
    is the same (a delta extends the turn's last item of its kind) and a fast stream costs the server's
    loop one reduce per slice instead of one per delta (bench/server.py)."""
    run: list[AnyEvent] = []
    for event in batch:
        if run and not (type(event) is type(run[0]) and event.turn_id == run[0].turn_id):
            state = reduce(state, _joined(run))
            run = []
        if type(event) in _TEXT:
            run.append(event)
        else:
            state = reduce(state, event)
    return reduce(state, _joined(run)) if run else state


def _joined(run: list[AnyEvent]) -> AnyEvent:
    first = run[0]
    return first if len(run) == 1 else type(first)(text="".join(e.text for e in run),  # type: ignore[attr-defined]
                                                    turn_id=first.turn_id)


def _line(event: AnyEvent) -> str:
    """One event as a line of JSON. orjson: a tenth of json.dumps's cost, paid for every delta on the
    server's loop (bench/server.py); json.dumps for what orjson refuses (a lone surrogate in a text)."""
    try:
        return orjson.dumps(event.to_dict(), default=str).decode()
    except TypeError:
        return json.dumps(event.to_dict(), default=str)


def _error(message: str, kind: str) -> dict[str, Any]:
    # Shaped like the engine's error event, so the panel shows it like any other.
    return {"type": "error", "turn_id": "", "message": message, "kind": kind, "status_code": None}


def _log_failure(future) -> None:
    exc = future.exception()
    if exc is not None:
        log.error("nbagent turn failed: %s", exc, exc_info=exc)
