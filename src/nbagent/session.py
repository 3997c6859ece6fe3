"""Sessions: a conversation (``Session``) and everything around it that tools see (``SessionState``).

``Session`` holds the messages, todos and counters in memory and mirrors them
to a backend: ``MemoryBackend`` keeps nothing, nbagent.store's SQLite backend
makes every appended step durable before the next model call. The loop only
talks to ``Session``.

``SessionState`` is what tools see as ``ctx.state``: the session, the workspace
store, the project memory (None when memory is off), the prompt history and a
slot for the background-task manager. ``open_state`` builds it from a
configuration: sessions in the workspace database when ``persist`` is on, else
in memory; a database that cannot be used is reported in ``problems`` and the
agent goes on in memory.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .errors import StoreError
from .ids import new_id
from .message_log import MessageLog

if TYPE_CHECKING:  # the store imports Session from here: its modules load lazily below
    from .store.db import Database
    from .store.history import PromptHistory
    from .store.memory import ProjectMemory
    from .store.sessions import SessionStore

log = logging.getLogger("nbagent.session")


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
    log: MessageLog = field(default_factory=MessageLog, repr=False, compare=False)
    """The messages; what only a transcript needs of a resumed session stays in the store until read
    (``messages`` reads it all, the request only what pruning keeps: nbagent.message_log)."""
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
        start = len(self.log)
        self.log.extend(messages)
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

    def message_heads(self) -> list[dict[str, Any]]:
        """Every message, heads included: for readers of roles and note ids only (the context
        absorber), never to send or show."""
        return self.log.heads()


def _title_from(prompt: str, limit: int = 60) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"



@dataclass
class SessionState:
    session: Session
    store: SessionStore | None = None
    memory: ProjectMemory | None = None
    history: PromptHistory | None = None
    tasks: Any = None
    """Background tasks (nbagent.tools.tasks' manager) when that tool set puts one here."""
    origin: str = "."
    problems: list[str] = field(default_factory=list)
    """Why state is not where it should be (a corrupt database, ...): for the front end to show."""
    _db: Database | None = field(default=None, repr=False)

    @property
    def todos(self) -> list[dict[str, Any]]:
        return self.session.todos

    def set_todos(self, todos: list[dict[str, Any]]) -> None:
        self.session.set_todos(todos)

    def memory_block(self) -> str:
        return self.memory.render_memory() if self.memory else ""

    def remember_prompt(self, prompt: str) -> None:
        if self.history is not None:
            self.history.add(self.origin, prompt)

    def prompts(self) -> list[str]:
        """This notebook's or directory's prompt history, oldest first."""
        return self.history.list(self.origin) if self.history is not None else []

    def open_memory(self) -> "ProjectMemory | None":
        """Project memory on this state's database (when memory is switched on later)."""
        from .store.memory import ProjectMemory

        db = self.store.db if self.store is not None else self._db
        return ProjectMemory(db) if db is not None else None

    def fork(self, up_to_turn: int | None = None) -> "SessionState":
        """A state on a new session holding this one's history up to a turn (all of it by default)."""
        if self.store is not None:
            session = self.store.fork(self.session.id, up_to_turn)
        else:
            session = _fork_in_memory(self.session, up_to_turn)
        return SessionState(session=session, store=self.store, memory=self.memory, history=self.history,
                            tasks=self.tasks, origin=self.origin, problems=list(self.problems), _db=self._db)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        elif self._db is not None:
            self._db.close()


def open_state(config, model: Any = None, selector: str | None = None) -> SessionState:
    """The state of an agent: ``config.persist``, ``config.memory`` and ``config.origin`` decide."""
    from .knowledge.embeddings import shared_embedder
    from .knowledge.memory_index import MemoryIndex
    from .store.db import Database
    from .store.history import PromptHistory
    from .store.memory import ProjectMemory
    from .store.sessions import normalize_origin

    selector = selector or config.session or "new"
    provider, model_name = describe_model(model, config)
    origin = normalize_origin(config.workspace, config.origin)
    problems: list[str] = []
    store = _open_store(config, problems) if config.persist else None
    if store is not None:
        session = store.open(selector, origin, provider=provider, model=model_name)
        db = store.db
        assert db is not None, "store.open() has just read the session from it"
    else:
        if selector not in ("new", "continue"):
            raise StoreError(f"cannot resume session {selector!r}: sessions are not stored "
                             + ("(persist is off)" if not config.persist else f"({problems[0]})"))
        session = Session(origin=origin, provider=provider, model=model_name)
        # Memory and history need a database even when nothing may be written to disk.
        db = Database(":memory:")
    memory = ProjectMemory(db, MemoryIndex(db, shared_embedder(config))) if config.memory else None
    return SessionState(session=session, store=store, memory=memory, history=PromptHistory(db), origin=origin,
                        problems=problems, _db=None if store is not None else db)


def _open_store(config, problems: list[str]) -> "SessionStore | None":
    from .store.sessions import SessionStore

    try:
        store = SessionStore(config.workspace)
    except StoreError as exc:  # a newer schema: refused, left alone, and the agent keeps working
        problems.append(str(exc))
        log.warning("%s", exc)
        return None
    if store.broken is not None:
        problems.append(str(store.broken))
        return None
    return store


def describe_model(model: Any, config: Any = None) -> tuple[str, str]:
    """(provider, model name) as stored on a session and used for pricing.

    The provider is the endpoint's base URL when one is set (it tells pricing which
    service it is), else the adapter's provider name.
    """
    from .redaction import public_url

    name = getattr(model, "name", None) or getattr(config, "model", None) or ""
    base_url = getattr(model, "base_url", None) or getattr(config, "base_url", None)
    provider = public_url(base_url) or getattr(model, "provider", "") or ""
    return str(provider), str(name)


def _fork_in_memory(session: Session, up_to_turn: int | None) -> Session:
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
