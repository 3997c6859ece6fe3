"""What a request carries around the history: a system prompt that stays byte-identical, and live notes.

Providers cache the byte-identical prefix of a request (tools, system prompt, history) and bill it
at a fraction of the price; a prefix that changes anywhere is read again in full from there on.
So the system prompt (static prompt, instruction files, repo map, project memory) is built once and
rebuilt only when something the user did changes it: the tools or settings, an instruction file.
A map that was not ready on the first turn joins it once. What changes during a session goes
after the history instead, on the newest message, and stays in the history as it was sent:

- at a turn's start, the user's prompt carries the unfinished todo list and the relevant memory
  for the prompt (entries already sent in this session, or listed whole in the system prompt's
  project memory, are not sent again);
- during a turn, a change of the todo in progress searches memory once more, and new hits ride on
  that step's newest tool result (the todo list itself is todo_write's result, in the history).

The attached context's notes and what the user has open in Jupyter already go into the history
(nbagent.attached.absorber, nbagent.engine.open_in_jupyter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .. import events as ev
from ..memory.entries import MAX_TEXT
from ..render.text import CLOSE, OPEN

if TYPE_CHECKING:
    from ..knowledge.turn import TurnKnowledge
    from .session_state import SessionState
    from .profiles import Profile

def with_note(content: str, note: str) -> str:
    """A message's content with a live note after it (the content unchanged when there is none)."""
    return f"{content}\n\n{OPEN}\n{note}\n{CLOSE}" if note else content



class RequestContext:
    """The system prompt and the live notes of one agent's requests (owned by the runtime)."""

    def __init__(self, *, static: Callable[[], str], knowledge: "TurnKnowledge",
                 state: Callable[[], "SessionState"], profile: "Profile", emit: Callable[[ev.AnyEvent], None]):
        self._static = static
        self.knowledge = knowledge
        self._state = state
        self.profile = profile
        self.emit = emit
        self._system: str | None = None
        self._key: tuple[Any, ...] | None = None
        self._memory_entries: list[dict[str, Any]] = []
        self._sent: set[tuple[str, int]] = set()
        """Relevant-memory entries (scope, id) this session's history already holds."""
        self._in_prompt: set[tuple[str, int]] = set()
        """Project-memory entries (scope, id) the system prompt shows whole: never sent again as relevant."""
        self._query = ""

    # ----- the system prompt -----------------------------------------------------------------------
    def system(self) -> str:
        # A setting changed between two steps (other tools) applies to the next request, as the tools do.
        if self._system is None or self._key is None or self._key[0] is not self._static():
            self.begin_turn()
        assert self._system is not None
        return self._system

    def begin_turn(self) -> None:
        """Rebuild the system prompt only if the user changed what it is made of."""
        knowledge = self.profile.knowledge
        instructions = self.knowledge.instructions_block() if knowledge else ""
        has_map = bool(knowledge and self.knowledge.map_block())
        key = (self._static(), instructions, has_map)
        if key != self._key:
            self._key = key
            self._system = self._build(key[0], instructions)

    def _build(self, static: str, instructions: str) -> str:
        if not self.profile.knowledge:
            self._memory_entries = []
            return static
        memory = self._state().memory
        entries = memory.top() if memory is not None else []
        self._memory_entries = [e.to_dict() for e in entries]
        self._in_prompt = {(memory.index.source, e.id) for e in entries if len(e.text) <= MAX_TEXT} \
            if memory is not None else set()
        block = memory.render_memory() if memory is not None else ""
        return "\n\n".join(p for p in (static, instructions, self.knowledge.map_block(), block) if p)

    def invalidate(self) -> None:
        """The tools or settings changed: the next turn builds the system prompt again."""
        self._key = None

    def reset(self) -> None:
        """Another session, or a compacted one: its history holds none of the notes sent so far."""
        self._sent = set()
        self._query = ""

    # ----- live notes ----------------------------------------------------------------------------
    def turn_note(self, prompt: str, turn_id: str) -> str:
        """What the user's prompt carries: the unfinished todo list and memory relevant to the prompt.
        Called once the turn has started: it also says which project-memory entries the prompt holds."""
        if self._memory_entries:
            self.emit(ev.MemoryInjected(entries=self._memory_entries, turn_id=turn_id))
        from ..tools.todos import render_todos  # here: the transcript's readers import this module, not the tools

        todos = self._state().todos
        parts = [render_todos(todos)] if any(t.get("status") != "completed" for t in todos) else []
        self._query = self._current_todo() or prompt
        parts.append(self._relevant(prompt, turn_id))
        return "\n\n".join(p for p in parts if p)

    def step_note(self, turn_id: str) -> str:
        """What this step's newest tool result carries: memory for a todo newly in progress, if new."""
        query = self._current_todo()
        if not query or query == self._query:
            return ""
        self._query = query
        return self._relevant(query, turn_id)

    def _current_todo(self) -> str:
        todos = self._state().todos or []
        return next((t.get("content", "") for t in todos if t.get("status") == "in_progress"), "")

    def _relevant(self, query: str, turn_id: str) -> str:
        if not self.profile.knowledge:
            return ""
        block, hits = self.knowledge.relevant_note(query, self._sent | self._in_prompt, turn_id)
        self._sent.update((h.row.source, h.row.id) for h in hits)
        return block
