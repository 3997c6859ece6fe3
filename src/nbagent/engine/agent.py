"""The Agent: the one object every front end drives.

It owns a worker thread running its own asyncio loop, so it behaves the same
in a script, in a Jupyter kernel (whose main thread already runs a loop) and
in the Jupyter server. Prompts queue and run one turn at a time; events go to
subscribers (called on the worker thread), into each turn's RunResult, and
through ``agent_state.reduce`` into the state that ``snapshot()`` returns.
Every prompt ends with exactly one turn_end, a queued prompt dropped by Abort
included. An agent closes itself at interpreter exit; a closed agent refuses
new prompts.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import dataclasses
import os
import queue
import threading
import time
from typing import Any, AsyncIterator, Callable, Iterator

from .. import events as ev
from ..render.redaction import logger
from ..render.agent_state import AgentState, reduce
from ..tools.approvals import check_decision, default_mode
from ..config import AgentConfig
from ..errors import AgentClosed
from ..ids import short_id
from .agent_checkpoints import AgentCheckpoints
from .agent_sessions import AgentSessions
from .result import RunResult
from . import attachments
from .runtime import AgentRuntime
from ..workers import shared_pool

log = logger("nbagent")


class Agent:
    """An AI coding agent on a workspace. See docs/python-api.md."""

    def __init__(self, workspace=None, model=None, base_url=None, api_key=None, api=None, toolsets=None,
                 tools=None, approval=None, approver=None, max_steps=None, session=None, memory=None,
                 origin=None, kernel=None, config: AgentConfig | None = None, **more_config: Any):
        model_obj = None if model is None or isinstance(model, str) else model
        if approval is None and config is None and not os.environ.get("NBAGENT_APPROVAL"):
            approval = default_mode()  # "sandboxed" where the sandbox works, "ask" elsewhere
        settings = dict(workspace=workspace, model=model if isinstance(model, str) else None,
                        base_url=base_url, api_key=api_key, api=api, toolsets=toolsets, approval=approval,
                        max_steps=max_steps, session=session, memory=memory, origin=origin, **more_config)
        if config is not None:
            config = config.with_changes(**{k: v for k, v in settings.items() if v is not None})
        else:
            config = AgentConfig.load(**settings)
        self._subscribers: list[Callable[[ev.AnyEvent], None]] = []
        self._sub_lock = threading.Lock()
        self._state = AgentState()
        self._jobs: asyncio.Queue | None = None
        self._waiting: list[tuple[str, str, concurrent.futures.Future]] = []
        self._current: asyncio.Task | None = None
        self._collectors: dict[str, list[ev.AnyEvent]] = {}
        self._skip_deltas: set[str] = set()
        self._in_words = False
        """Whether the last event emitted was a delta (see _emit: the first of a run hands the GIL over)."""
        self._attached: dict[str, Any] = {}
        """turn id -> what the user attached to that prompt (nbagent.engine.attachments), until it runs."""
        self._idle = threading.Event()
        self._idle.set()
        self._ended = threading.Event()
        """The last turn has sent its turn_end and none waits: only its bookkeeping is left."""
        self._thread_loop = _LoopThread(name=f"nbagent-{id(self):x}")
        try:
            self.runtime = AgentRuntime(config, emit=self._emit, model=model_obj, extra_tools=tools or (),
                                        approver=approver, kernel=kernel, listened=lambda: bool(self._subscribers))
        except BaseException:
            self._thread_loop.stop()  # a failed construction leaves no thread behind
            raise
        # Checkpoints and session switching each have their own owner; the methods below delegate.
        self._checkpoints = AgentCheckpoints(self.runtime, self._call_idle)
        self._sessions = AgentSessions(self.runtime, self._call_idle, self._on_thread, self._emit)
        self._state = self._sessions.fresh_state()
        self._thread_loop.call(self._start_worker)
        self.runtime.context.start_waker(self._context_wake)
        _LIVE_AGENTS.add(self)

    # ----- running prompts -------------------------------------------------------------------
    def submit(self, prompt: str, *, turn_id: str | None = None, keep_deltas: bool = True,
               attach: Any = None) -> concurrent.futures.Future:
        """Queue ``prompt``; it runs after the turns before it. The future gives a RunResult.

        ``keep_deltas=False`` leaves the streamed deltas out of ``RunResult.events``: a front end
        that renders them live (the server, the widgets) need not keep thousands per turn.
        ``attach``: objects shown to the model with the prompt (nbagent.engine.attachments: a figure,
        an image, PNG/JPEG bytes, a path, a DataFrame, a display object), read now, in this thread.
        """
        if self._closed:
            raise AgentClosed("this agent is closed: make a new Agent to go on")
        attached = attachments.attach(attach, self.runtime.config.image_max_side) if attach is not None else None
        future: concurrent.futures.Future = concurrent.futures.Future()
        turn_id = turn_id or short_id("turn_")
        self._idle.clear()
        self._ended.clear()
        if not keep_deltas:
            self._skip_deltas.add(turn_id)
        if attached is not None:
            self._attached[turn_id] = attached
        self._thread_loop.loop.call_soon_threadsafe(self._enqueue, prompt, turn_id, future)
        return future

    def run(self, prompt: str, timeout: float | None = None, *, attach: Any = None) -> RunResult:
        """Run ``prompt`` to the end of its turn and return the result (blocks). ``attach``: see submit."""
        if threading.current_thread() is self._thread_loop.thread:
            raise RuntimeError("Agent.run() cannot be called from the agent's own thread; use arun()")
        return self.submit(prompt, attach=attach).result(timeout)

    async def arun(self, prompt: str, *, attach: Any = None) -> RunResult:
        return await asyncio.wrap_future(self.submit(prompt, attach=attach))

    def stream(self, prompt: str, *, attach: Any = None) -> Iterator[ev.AnyEvent]:
        """Yield the events of ``prompt``'s turn as they happen, ending with its turn_end."""
        inbox: queue.Queue = queue.Queue()
        turn_id = short_id("turn_")
        unsubscribe = self.subscribe(lambda e: inbox.put(e) if e.turn_id == turn_id else None)
        try:
            self.submit(prompt, turn_id=turn_id, keep_deltas=False, attach=attach)
            while True:
                event = inbox.get()
                yield event
                if isinstance(event, ev.TurnEnd):
                    return
        finally:
            unsubscribe()

    async def astream(self, prompt: str, *, attach: Any = None) -> AsyncIterator[ev.Event]:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue = asyncio.Queue()
        turn_id = short_id("turn_")
        def forward(e: ev.Event) -> None:
            if e.turn_id == turn_id:
                loop.call_soon_threadsafe(inbox.put_nowait, e)

        unsubscribe = self.subscribe(forward)
        try:
            self.submit(prompt, turn_id=turn_id, keep_deltas=False, attach=attach)
            while True:
                event = await inbox.get()
                yield event
                if isinstance(event, ev.TurnEnd):
                    return
        finally:
            unsubscribe()

    # ----- control (safe from any thread) --------------------------------------------------
    def abort(self) -> None:
        """End the current turn at once (stream closed, command killed) and clear the queue."""
        self.runtime.processes.kill_all()
        self._thread_loop.loop.call_soon_threadsafe(self._abort_now)

    def stop_command(self) -> int:
        """Kill the command in flight (its whole tree); the turn goes on. Returns processes killed."""
        return self.runtime.processes.kill_all()

    def decide(self, call_id: str, decision: str) -> None:
        """Answer an approval_request: "approve", "deny" or "always"."""
        check_decision(decision)
        self._thread_loop.loop.call_soon_threadsafe(self.runtime.approvals.resolve, call_id, decision)

    def subscribe(self, callback: Callable[[ev.AnyEvent], None]) -> Callable[[], None]:
        with self._sub_lock:
            self._subscribers = [*self._subscribers, callback]

        def unsubscribe() -> None:
            with self._sub_lock:
                self._subscribers = [s for s in self._subscribers if s is not callback]

        return unsubscribe

    def watch(self, callback: Callable[[ev.AnyEvent], None]) -> tuple[AgentState, Callable[[], None]]:
        """Subscribe ``callback`` and return ``(state, unsubscribe)``: the snapshot taken at the same
        instant, on the agent's own thread, so that reducing every event the callback gets onto
        ``state`` misses none and repeats none (the server hub starts each session this way)."""

        def start() -> tuple[AgentState, Callable[[], None]]:
            return self.snapshot(), self.subscribe(callback)

        if threading.current_thread() is self._thread_loop.thread:
            return start()
        return self._thread_loop.run(_as_coro(start)).result()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no turn runs or waits; False on timeout."""
        return self._idle.wait(timeout)

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    @property
    def turn_shown(self) -> bool:
        """A turn runs or waits as front ends see it: false from its turn_end on, while ``busy`` stays
        true until the turn's last bookkeeping (its checkpoint) is done."""
        return self._state.busy

    @property
    def queued(self) -> int:
        return len(self._waiting)

    # ----- session -------------------------------------------------------------------------
    @property
    def session(self):
        return self.runtime.session

    @property
    def session_id(self) -> str:
        return self.runtime.session.id

    @property
    def registry(self):
        return self.runtime.registry

    @property
    def context(self):
        """The attached context sources: ``push``, ``attach``, ``mute``, ``remove``, ``sources()``
        (nbagent.engine.attached_handle.ContextHandle; docs/context.md)."""
        from .attached_handle import ContextHandle

        return ContextHandle(self.runtime, lambda: self.session_id)

    @property
    def todos(self) -> list[dict[str, Any]]:
        return list(self.runtime.session.todos)

    @property
    def config(self) -> AgentConfig:
        """The configuration in force now (``reconfigure`` changes it)."""
        return self.runtime.config

    @property
    def memory(self):
        """The project memory of this agent's scopes, for people (nbagent.memory.handle.MemoryHandle:
        ``list()``, ``search(q)`` and ``forget(x)`` give DataFrames; ``remember``, ``status``), or None when
        memory is off."""
        if self.runtime.state.memory is None:
            return None
        return self.runtime.knowledge.memory_handle()

    @property
    def tasks(self):
        """The workspace's background tasks (nbagent.tools.tasks.TaskManager)."""
        from ..tools.tasks import TaskManager

        return TaskManager.for_workspace(self.runtime.workspace)

    def approval_policy(self, tool_name: str) -> str:
        """The approval policy in force for a tool: never, ask or always_ask."""
        tool = self.registry.get(tool_name)
        if tool is None:
            raise KeyError(f"no tool named {tool_name!r}")
        return self.runtime.approvals.policy_of(tool)

    def snapshot(self) -> AgentState:
        """The agent's state now: session, settings, queue, turn in flight, approvals, todos, counters and
        the finished transcript. Front ends start from it and apply later events with ``reduce``."""
        state = self._state
        stored, problems = self._sessions.stored_transcript(state.session_id)
        if problems:  # a damaged row: the transcript shows the rest, and says what it could not read
            state = dataclasses.replace(state, notices=state.notices + problems)
        return dataclasses.replace(state, transcript=stored + state.transcript) if stored else state

    def reconfigure(self, **changes: Any) -> dict[str, Any]:
        """Change settings of the live agent on the same session: model, approval, toolsets, max_steps,
        memory, tool_approvals, temperature, ... A change made while a turn runs applies to its next
        step (the approval mode to the very next decision). ``None`` leaves a setting as it is;
        ``nbagent.DEFAULT`` puts it back to what the configuration gives. Returns what changed; emits
        settings_changed."""
        if self._closed:
            raise AgentClosed("this agent is closed")
        changes = {k: v for k, v in changes.items() if v is not None}
        if threading.current_thread() is self._thread_loop.thread:  # a subscriber, between two steps
            return self._apply_settings(changes)
        return self._thread_loop.run(_as_coro(self._apply_settings, changes)).result()

    def mcp_status(self, start: bool = False) -> list[dict[str, Any]]:
        """The configured MCP servers: name, source, transport, target, enabled (its tool set is on),
        status, error, trust and tools. ``start=True`` first starts the enabled ones not started yet."""
        if start:
            self._call_idle(self.runtime.start_mcp)
        return self.runtime.mcp.status()

    # ----- switching sessions (nbagent.engine.agent_sessions) --------------------------------
    def new_session(self) -> str:
        """Continue in a new, empty session; returns its id."""
        return self._sessions.new()

    def resume(self, selector: str) -> str:
        """Continue in the stored session ``selector`` names ("continue", an id or its prefix)."""
        return self._sessions.resume(selector)

    def fork(self, up_to_turn: int | None = None) -> str:
        """Continue in a new session that starts with a copy of this one up to ``up_to_turn``."""
        return self._sessions.fork(up_to_turn)

    def compact(self) -> RunResult:
        """Have the model summarise the transcript; the summary replaces it on the wire."""
        events = self._thread_loop.run(self.runtime.compact()).result()
        end = events[-1]
        return RunResult.from_events(events, end, self.session_id)

    def instruction_files(self) -> list:
        """The instruction files in the system prompt, in order: source, path, size, characters included.

        Files are checked for changes first, so this shows what the next turn will use.
        """
        return self.runtime.knowledge.instruction_files()

    def repo_map(self) -> str:
        """The repo map the system prompt carries (built now if no turn built it yet)."""
        return self.runtime.knowledge.repo_map_block()

    # ----- checkpoints (docs/checkpoints.md; nbagent.engine.agent_checkpoints) --------------
    def changes(self, turn: int | None = None):
        """The changes of ``turn`` (default: the newest turn with changes to review) as rows: a ``Changes``
        sequence of ``ChangeRow`` (id, path, cell_id, kind, hunk, before, after, status...), with
        ``.frame()`` for a DataFrame. Notebooks cell by cell, text files hunk by hunk
        (docs/notebooks.md, "Reviewing a turn")."""
        return self._checkpoints.changes(turn)

    def keep(self, only=None, turn: int | None = None):
        """Mark rows of a turn kept (``only``: rows, row ids, paths or cell ids; None: every row still
        awaiting review). A suggested edit (review before writing) is written then. Returns a Reviewed."""
        return self._checkpoints.keep(only, turn)

    def undo(self, force: bool = False, turn: int | None = None, only=None):
        """Put the files the last (not yet undone) turn changed back as they were before it, and the
        kernel variables its kernel_run and notebook_run calls rebound, added or deleted.

        With ``only`` (rows of ``agent.changes()``, their ids, paths or cell ids) only those changes of
        ``turn`` (default: the newest turn with changes) are taken back, each refused (in the returned
        Reviewed's ``refused``, with why) where its cell or lines were changed since.

        Refuses with CheckpointConflict (listing the paths) when one of them changed since the
        turn, and with KernelConflict when the user rebound one of its variables since, unless
        ``force``; ``turn`` (a view's button) refuses unless it is that turn. The conversation stays;
        a note tells the model. Returns a Restored (action, turn, files, names, not_restored, and
        ``replay``: the cells restart-and-replay would run when something could not be restored).
        """
        return self._checkpoints.undo(force, turn, only)

    def redo(self, force: bool = False, turn: int | None = None, only=None):
        """Re-apply the turn the last undo reverted (same rules as ``undo``); after a partial undo (and no
        whole one), the rows it took back. ``only``: re-apply those rows of ``turn``."""
        return self._checkpoints.redo(force, turn, only)

    def checkpoints(self):
        """This session's checkpoints, oldest first: a pandas DataFrame with the columns turn, time,
        files changed (a count), files (the paths) and undone."""
        return self._checkpoints.table()

    def kernel_changes(self, turn: int | None = None):
        """What the agent's kernel calls did to the kernel's variables (all turns, or ``turn``): a pandas
        DataFrame, one row per name and call, with the columns turn, call_id, name, change (added,
        rebound, deleted, mutated, unchecked), undone and restorable (whether undo can bind it again)."""
        return self._checkpoints.kernel_changes(turn)

    def replay(self, cells=None):
        """Restart and replay, on the user's word: clear the kernel's variables and run ``cells`` (an
        undo's ``Restored.replay``) in order in the user's kernel, stopping at the first error.
        Returns a ReplayOutcome (ran, failed, error).

        An agent outside the kernel (the JupyterLab panel's) replays in the kernel whose undo offered the
        plan, through the Jupyter protocol; ``cells`` None there is that plan, and a ``kernel_replayed``
        event reports the outcome."""
        return self._checkpoints.replay(cells)

    @property
    def replay_offered(self) -> int | None:
        """The turn whose undo offered a restart-and-replay plan that has not run yet (an agent outside the
        kernel; None: no plan on offer)."""
        return self._checkpoints.replay_offered()

    def diff(self, turn: int) -> str:
        """The unified diff of the files ``turn`` changed (from its checkpoints)."""
        return self._checkpoints.diff(turn)

    def set_model(self, name: str) -> None:
        self.reconfigure(model=name)

    def close(self) -> None:
        """Abort what runs, release the model client and the session, and stop the worker thread."""
        if self._closed:
            return
        self._closed = True
        _LIVE_AGENTS.discard(self)
        self.abort()
        try:
            self._thread_loop.run(self._shutdown()).result(10)
        except Exception:  # closing must not raise: it runs in finally blocks and at exit
            log.debug("error while closing the agent", exc_info=True)
        self._thread_loop.stop()

    @property
    def closed(self) -> bool:
        return self._closed

    _closed = False

    async def _shutdown(self) -> None:
        if self._current is not None:
            await asyncio.wait([self._current], timeout=5)
        self._worker.cancel()
        await asyncio.gather(self._worker, return_exceptions=True)
        await self.runtime.aclose()

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def view(self):
        """Show the live view of this agent's turns (in Jupyter)."""
        from ..jupyter.kernel.view import show_agent_view

        return show_agent_view(self)

    def _context_wake(self, names: list[str]) -> bool:
        """A source attached with wake=True changed (context_wake on): start a turn if nothing runs.
        Its prompt names the sources, so the views show it as a turn those sources started."""
        if self._closed or self.busy:
            return False
        from ..attached.live import WAKE_PROMPT

        self.submit(WAKE_PROMPT.format(names=", ".join(names)))
        return True

    # ----- internals (on the worker thread) ------------------------------------------------
    def _call_idle(self, fn, *args):
        # A front end may act on turn_end at once (an Undo button): the turn's last bookkeeping after
        # that event is waited for, a turn still running is refused.
        if self.busy and not (self._ended.is_set() and self._idle.wait(IDLE_AFTER_END)):
            raise RuntimeError("a turn is running: wait for it or abort it first")
        return self._thread_loop.run(_as_coro(fn, *args)).result()

    def _on_thread(self, fn) -> None:
        """Run ``fn`` on the agent's thread and wait for it (a turn may be running)."""
        self._thread_loop.run(_as_coro(fn)).result()

    def _apply_settings(self, changes: dict[str, Any]) -> dict[str, Any]:
        changed = self.runtime.reconfigure(changes)
        if changed:
            # Front ends show settings as runtime.settings() words them (toolsets as a list, ...).
            current = self.runtime.settings()
            shown = {k: current.get(k, v) for k, v in changed.items()}
            if "toolsets" in changed:  # what follows from them, so front ends show the tools really on
                shown.update({k: current[k] for k in ("enabled_toolsets", "tools") if k in current})
            self._emit(ev.SettingsChanged(settings={k: v for k, v in shown.items() if _jsonable(v)}))
        return changed

    def _start_worker(self) -> None:
        self._jobs = asyncio.Queue()
        self._worker = asyncio.ensure_future(self._drain())

    def _enqueue(self, prompt: str, turn_id: str, future: concurrent.futures.Future) -> None:
        self._waiting.append((prompt, turn_id, future))
        if self._current is not None or len(self._waiting) > 1:
            self._emit(ev.PromptQueued(prompt=prompt, position=len(self._waiting), turn_id=turn_id))
        assert self._jobs is not None, "the worker starts with the agent"
        self._jobs.put_nowait(None)

    async def _drain(self) -> None:
        jobs = self._jobs
        assert jobs is not None, "_start_worker made the queue before starting this"
        while True:
            await jobs.get()
            if not self._waiting:
                continue
            prompt, turn_id, future = self._waiting.pop(0)
            collected: list[ev.AnyEvent] = []
            self._collectors[turn_id] = collected
            self._current = asyncio.ensure_future(self.runtime.run_turn(prompt, turn_id, self._attached.pop(turn_id, None)))
            try:
                end = await self._current
            except asyncio.CancelledError:  # aborted before the turn's first await: nothing was said
                end = ev.TurnEnd(reason="aborted", turn_id=turn_id)
                self._emit(end)
            except Exception as exc:  # a bug in the engine: report it, keep the agent usable
                self._emit(ev.Error(message=f"{type(exc).__name__}: {exc}", kind="internal", turn_id=turn_id))
                end = ev.TurnEnd(reason="error", turn_id=turn_id)
                self._emit(end)
            finally:
                self._current = None
                self._collectors.pop(turn_id, None)
                self._skip_deltas.discard(turn_id)
            if not future.done():
                future.set_result(RunResult.from_events(collected, end, self.session_id))
            if not self._waiting:
                self._idle.set()

    def _abort_now(self) -> None:
        waiting, self._waiting = self._waiting, []
        for prompt, turn_id, future in waiting:
            self._attached.pop(turn_id, None)
            end = ev.TurnEnd(reason="aborted", turn_id=turn_id)
            self._emit(end)  # every prompt ends with a turn_end, a dropped one too
            if not future.done():
                future.set_result(RunResult.from_events([end], end, self.session_id))
        if self._current is not None:
            self._current.cancel()
        elif not waiting:
            self._idle.set()

    def _emit(self, event: ev.AnyEvent) -> None:
        self._state = reduce(self._state, event)
        if isinstance(event, ev.TurnEnd) and not self._waiting:
            self._ended.set()
        collected = self._collectors.get(event.turn_id)
        if collected is not None and not (type(event) in _DELTAS and event.turn_id in self._skip_deltas):
            collected.append(event)
        for callback in self._subscribers:
            try:
                callback(event)
            except Exception:  # a broken front end must not break the turn
                log.exception("event subscriber failed")
        if type(event) in _WORDS:
            if not self._in_words:
                self._in_words = True
                # The first words of a run: the front end's thread (Agent.stream's reader, a widget, the
                # server's loop) was woken, but would wait for the GIL until this thread next blocks,
                # after the rest of what arrived with them (0.4-0.5 ms of the time to first text here).
                # Words only: a handover costs 0.2-0.3 ms of the loop's step here, which a tool call's
                # streamed arguments, shown to no one waiting, need not pay.
                time.sleep(0)
        else:
            self._in_words = False


_DELTAS = (ev.TextDelta, ev.ReasoningDelta, ev.ToolInputDelta)
_WORDS = (ev.TextDelta, ev.ReasoningDelta)
IDLE_AFTER_END = 10.0
"""Seconds an undo, redo or switch waits for a turn that has sent its turn_end to finish."""
_LIVE_AGENTS: "set[Agent]" = set()
"""Every agent not closed yet, held strongly: an agent lives until close() or interpreter exit (its loop
thread runs until then anyway). Held weakly, an agent no name refers to (``Agent(...).run(...)``) was
collected with its worker task still pending ("Task was destroyed but it is pending!")."""


@atexit.register
def _close_live_agents() -> None:
    """At interpreter exit, close what is still open: no turn left half-written, no pending-task noise."""
    for agent in list(_LIVE_AGENTS):
        agent.close()


def _jsonable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, list, tuple, dict, type(None)))


async def _as_coro(fn, *args):
    result = fn(*args)
    if asyncio.iscoroutine(result):
        result = await result
    return result


class _LoopThread:
    """A daemon thread running an asyncio loop until stopped."""

    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(shared_pool())  # no thread of its own per agent (nbagent.workers)
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, fn, *args) -> None:
        done = threading.Event()

        def wrapped():
            try:
                fn(*args)
            finally:
                done.set()

        self.loop.call_soon_threadsafe(wrapped)
        done.wait()

    def run(self, coro) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        if not self.thread.is_alive():
            self.loop.close()
