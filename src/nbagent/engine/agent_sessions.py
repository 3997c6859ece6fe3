"""The agent's session switching: new, resume and fork, and the stored transcript of the open session.

``Agent.new_session()``, ``resume()`` and ``fork()`` delegate here (docs/python-api.md, "Sessions and
data"). The runtime opens the other session; this object then tells the front ends with one
``session_changed`` carrying the whole state they start over from. It also keeps the turns stored
before the agent opened its session, which ``Agent.snapshot()`` puts in front of the live ones.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from .. import events as ev
from ..render.agent_state import AgentState, Counters, NoticeItem, turns_from_messages
from .runtime import AgentRuntime


class AgentSessions:
    """Which session one agent is on, and the moves to another."""

    def __init__(self, runtime: AgentRuntime, call_idle: Callable[..., Any],
                 on_thread: Callable[[Callable[[], None]], None], emit: Callable[[ev.AnyEvent], None]):
        self._runtime = runtime
        self._call_idle = call_idle
        """Runs a function on the agent's thread once no turn runs (refuses while one does)."""
        self._on_thread = on_thread
        """Runs a function on the agent's thread and waits for it: events are emitted from there only."""
        self._emit = emit
        self._stored_count = len(runtime.session.log)
        """Messages the session held when the agent opened it: the live state shows what comes after."""
        self._stored_turns: tuple[str | None, tuple, tuple[NoticeItem, ...]] | None = None

    def new(self) -> str:
        return self._switch(self._runtime.switch_session, "new")

    def resume(self, selector: str) -> str:
        return self._switch(self._runtime.switch_session, selector)

    def fork(self, up_to_turn: int | None = None) -> str:
        return self._switch(self._runtime.fork_session, up_to_turn)

    def fresh_state(self) -> AgentState:
        """The state of the open session before any turn of this agent: its title, settings, todos, counters."""
        runtime = self._runtime
        session = runtime.session
        return AgentState(session_id=session.id, title=session.title, settings=runtime.settings(),
                          todos=tuple(session.todos),
                          counters=Counters(session.input_tokens, session.output_tokens, session.cost,
                                            session.cached_tokens, session.image_tokens))

    def stored_transcript(self, session_id: str | None) -> tuple[tuple, tuple[NoticeItem, ...]]:
        """The turns stored before this agent opened the session (rebuilt once per session), and
        notices of rows that could not be read."""
        cached = self._stored_turns
        if cached is None or cached[0] != session_id:
            # Read here, not at construction: a resumed session's old outputs stay in the store until then.
            messages, problems = self._runtime.session.log.readable()
            notices = tuple(NoticeItem(level="error", text=f"not shown: {p}") for p in problems)
            cached = (session_id, turns_from_messages(messages[: self._stored_count]), notices)
            self._stored_turns = cached
        return cached[1], cached[2]

    def _switch(self, fn, *args) -> str:
        session_id = self._call_idle(fn, *args)
        self._on_thread(self._switched)
        return session_id

    def _switched(self) -> None:
        self._stored_count = len(self._runtime.session.log)
        fresh = self.fresh_state()
        stored, problems = self.stored_transcript(fresh.session_id)
        whole = dataclasses.replace(fresh, transcript=stored, notices=problems)
        self._emit(ev.SessionChanged(session_id=fresh.session_id or "", state=whole.to_dict()))
