"""A conversation: its messages, todos and counters, kept in memory and mirrored to a backend.

The loop only talks to ``Session``; where the data goes is the backend's
business (``MemoryBackend`` keeps nothing, nbagent.store's SQLite backend
makes every appended step durable before the next model call).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from .ids import new_id


class SessionBackend(Protocol):
    def append_messages(self, session_id: str, start_index: int, messages: list[dict], turn: int) -> None: ...

    def update_session(self, session_id: str, **fields: Any) -> None: ...

    def add_tool_call(self, session_id: str, record: dict[str, Any]) -> None: ...

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None: ...


class MemoryBackend:
    """Keeps nothing beyond the Session object itself (``persist=False``)."""

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
    messages: list[dict[str, Any]] = field(default_factory=list)
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
    backend: SessionBackend = field(default_factory=MemoryBackend, repr=False)
    defer_records: bool = field(default=False, repr=False, compare=False)
    """While True (the loop sets it during a turn), tool-call and usage records wait for the next
    step's append and share its transaction; otherwise they are written at once."""
    _pending: list[tuple[Any, Any]] = field(default_factory=list, repr=False, compare=False)

    def append(self, messages: list[dict[str, Any]]) -> None:
        """Add a completed step (with the tool calls and usage recorded since the last one);
        durable in the backend before this returns."""
        start = len(self.messages)
        self.messages.extend(messages)
        with self._batch():
            self._flush_records()
            self.backend.append_messages(self.id, start, messages, self.turns)

    def flush(self) -> None:
        """Write tool-call and usage records still waiting for a step (at a turn's end)."""
        if self._pending:
            with self._batch():
                self._flush_records()

    def _record(self, write, record: Any) -> None:
        self._pending.append((write, record))
        if not self.defer_records:
            self.flush()

    def _batch(self):
        batch = getattr(self.backend, "batch", None)
        return batch() if batch is not None else contextlib.nullcontext()

    def _flush_records(self) -> None:
        pending, self._pending = self._pending, []
        for write, record in pending:
            write(self.id, record)

    def begin_turn(self, prompt: str) -> None:
        self.turns += 1
        changes: dict[str, Any] = {"turns": self.turns, "updated": time.time()}
        if not self.title:
            self.title = _title_from(prompt)
            changes["title"] = self.title
        self.backend.update_session(self.id, **changes)

    def add_usage(self, input_tokens: int, output_tokens: int, cost: float | None) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        with self._batch():
            self._record(self.backend.add_usage, {
                "turn": self.turns, "input_tokens": input_tokens, "output_tokens": output_tokens, "cost": cost,
            })
            self._record(self._save_totals, None)

    def _save_totals(self, session_id: str, _record: Any) -> None:
        self.backend.update_session(
            session_id, input_tokens=self.input_tokens, output_tokens=self.output_tokens, cost=self.cost,
        )

    def add_tool_call(self, record: dict[str, Any]) -> None:
        # Written with the step it belongs to (one transaction), see append().
        self._record(self.backend.add_tool_call, {"turn": self.turns, **record})

    def set_todos(self, todos: list[dict[str, Any]]) -> None:
        self.todos = todos
        self.backend.update_session(self.id, todos=todos)

    def set_summary(self, summary_message: dict[str, Any]) -> None:
        """Replace the transcript on the wire by a summary; older messages stay stored."""
        self.summary_index = len(self.messages)
        self.append([summary_message])
        self.backend.update_session(self.id, summary_index=self.summary_index)

    def wire_messages(self) -> list[dict[str, Any]]:
        return self.messages[self.summary_index:] if self.summary_index else self.messages


def _title_from(prompt: str, limit: int = 60) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
