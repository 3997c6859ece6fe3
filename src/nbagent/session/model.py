"""Session: one conversation's messages, todos and counters, mirrored to a backend.

``Session`` holds the messages, todos and counters in memory and mirrors them
to a backend: ``NullBackend`` keeps nothing (a session that is not persisted),
nbagent.store's SQLite backend makes every appended step durable before the next
model call. The loop only talks to ``Session``. This module imports no store:
the store imports it (nbagent.engine.session_state wires the two together).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..ids import new_id
from ..render.escape import truncate
from .message_log import MessageLog


class SessionBackend(Protocol):
    def append_messages(self, session_id: str, start_index: int, messages: list[dict], turn: int) -> None: ...

    def update_session(self, session_id: str, **fields: Any) -> None: ...

    def add_tool_call(self, session_id: str, record: dict[str, Any]) -> None: ...

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None: ...


class NullBackend:
    """Keeps nothing beyond the Session object itself: the session is not persisted (``persist=False``)."""

    def append_messages(self, session_id, start_index, messages, turn):
        pass

    def update_session(self, session_id, **fields):
        pass

    def add_tool_call(self, session_id, record):
        pass

    def add_usage(self, session_id, record):
        pass


@dataclass
class Session:
    id: str = field(default_factory=new_id)
    log: MessageLog = field(default_factory=MessageLog, repr=False, compare=False)
    """The messages; what only a transcript needs of a resumed session stays in the store until read
    (``messages`` reads it all, the request only what pruning keeps: nbagent.session.message_log)."""
    title: str | None = None
    origin: str | None = None
    provider: str = ""
    model: str = ""
    todos: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    summary_index: int = 0
    """Messages before this index were replaced by a /compact summary (kept, but not sent)."""
    cached_tokens: int = 0
    """Of input_tokens, those the provider read from its prompt cache (billed as cache reads)."""
    image_tokens: int = 0
    """Of input_tokens, the estimate for the images the requests carried (nbagent.images)."""
    backend: SessionBackend = field(default_factory=NullBackend, repr=False)
    defer_records: bool = field(default=False, repr=False, compare=False)
    """While True (the loop sets it during a turn), tool-call and usage records wait for the next
    step's append and share its transaction; otherwise they are written at once."""
    _pending: list[tuple[Any, Any]] = field(default_factory=list, repr=False, compare=False)

    def append(self, messages: list[dict[str, Any]]) -> None:
        """Add a completed step (with the tool calls and usage recorded since the last one);
        durable in the backend before this returns."""
        start = len(self.log)
        self.log.extend(messages)
        self._write(lambda: self.backend.append_messages(self.id, start, messages, self.turns))

    def append_soon(self, messages: list[dict[str, Any]]) -> None:
        """Add ``messages`` to the log now and to the backend with the next write (``flush`` or a step's
        append): the prompt, which the loop writes while its request is on the way, not before it."""
        start, turns = len(self.log), self.turns
        self.log.extend(messages)
        self._pending.append((lambda session_id, _: self.backend.append_messages(session_id, start, messages, turns),
                              None))

    def flush(self) -> None:
        """Write what is still waiting (records, a prompt) in one transaction (at a turn's end)."""
        if self._pending:
            self._write(None)

    def _record(self, write, record: Any) -> None:
        self._pending.append((write, record))
        if not self.defer_records:
            self.flush()

    def _write(self, then) -> None:
        """What waits, then ``then()``, in one transaction; what waited is dropped only once it committed
        (a failed write leaves it for the next one, so a step is never written without the ones before)."""
        pending = list(self._pending)
        batch = getattr(self.backend, "batch", None)
        with batch() if batch is not None else contextlib.nullcontext():
            for write, record in pending:
                write(self.id, record)
            if then is not None:
                then()
        del self._pending[:len(pending)]

    def begin_turn(self, prompt: str) -> None:
        self.turns += 1
        changes: dict[str, Any] = {"turns": self.turns, "updated": time.time()}
        if not self.title:
            self.title = _title_from(prompt)
            changes["title"] = self.title
        # With the prompt's transaction when the loop defers records (one commit for both), else now.
        self._record(lambda session_id, fields: self.backend.update_session(session_id, **fields), changes)

    def add_usage(self, input_tokens: int, output_tokens: int, cost: float | None, cached_tokens: int = 0,
                  image_tokens: int = 0) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cached_tokens += cached_tokens
        self.image_tokens += image_tokens
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        # The record and the new totals in one transaction: now, or (during a turn) with the next step's
        # append. No transaction of its own around them: an empty one still takes the write lock.
        self._pending.append((self.backend.add_usage, {
            "turn": self.turns, "input_tokens": input_tokens, "output_tokens": output_tokens,
            "cached_tokens": cached_tokens, "image_tokens": image_tokens, "cost": cost,
        }))
        self._record(self._save_totals, None)

    def _save_totals(self, session_id: str, _record: Any) -> None:
        self.backend.update_session(
            session_id, input_tokens=self.input_tokens, output_tokens=self.output_tokens,
            cached_tokens=self.cached_tokens, image_tokens=self.image_tokens, cost=self.cost,
        )

    def add_tool_call(self, record: dict[str, Any]) -> None:
        # Written with the step it belongs to (one transaction), see append().
        self._record(self.backend.add_tool_call, {"turn": self.turns, **record})

    def set_todos(self, todos: list[dict[str, Any]]) -> None:
        self.todos = todos
        self.backend.update_session(self.id, todos=todos)

    def set_summary(self, summary_message: dict[str, Any]) -> None:
        """Replace the transcript on the wire by a summary; older messages stay stored."""
        self.summary_index = len(self.log)
        self.append([summary_message])
        self.backend.update_session(self.id, summary_index=self.summary_index)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every message whole, in order (what a resume left in the store is read first)."""
        return self.log.all()

    def wire_messages(self, loaded_from: int = 0) -> list[dict[str, Any]]:
        """The messages sent to the model: those after a /compact summary. Before wire position
        ``loaded_from`` a message may still be a head (what pruning keeps of it): only for the pruned
        request, which cuts those messages down to that anyway (loop.Loop._pruned)."""
        return self.log.view(self.summary_index, self.summary_index + loaded_from)

    def wire_sizes(self) -> list[int]:
        """message_chars of each wire message, without reading heads' whole messages."""
        return self.log.sizes(self.summary_index)

    def wire_chars(self, start: int = 0) -> int:
        """message_chars of the wire messages from wire position ``start`` on, added up (running totals)."""
        return self.log.chars(self.summary_index + start)

    def message_heads(self) -> list[dict[str, Any]]:
        """Every message, heads included: for readers of roles and note ids only (the context
        absorber), never to send or show."""
        return self.log.heads()


OPEN_CONTEXT_TAG = "<open_in_jupyter>"
"""Opens the block nbagent.engine.open_in_jupyter appends after what the user typed (what is open in
Jupyter); a title shows only what the user typed."""


def _title_from(prompt: str, limit: int = 60) -> str:
    typed = prompt.split(f"\n\n{OPEN_CONTEXT_TAG}", 1)[0]
    return truncate(typed, limit, one_line=True)


MemoryBackend = NullBackend
"""The old name of NullBackend."""


def fork_in_memory(session: Session, up_to_turn: int | None) -> Session:
    """A new session holding ``session``'s messages up to a turn (all of them by default), in memory."""
    # Without stored turn numbers, a turn starts at each user prompt (summaries excluded).
    messages, turn = [], 0
    for message in session.messages:
        if message.get("role") == "user" and not message.get("summary"):
            turn += 1
        if up_to_turn is not None and turn > up_to_turn:
            break
        messages.append(dict(message))
    whole = up_to_turn is None or up_to_turn >= session.turns
    return Session(log=MessageLog(messages), title=session.title, origin=session.origin, provider=session.provider,
                   model=session.model, todos=list(session.todos) if whole else [],
                   turns=session.turns if whole or up_to_turn is None else up_to_turn,
                   summary_index=session.summary_index if session.summary_index < len(messages) else 0)
