"""``SessionState``: what tools see as ``ctx.state``, and how an agent opens it from its configuration.

It gathers the session (messages, todos, counters), the workspace store, the
project memory (None when memory is off), the prompt history and a slot for
the background-task manager. ``open_state`` builds it: sessions in the
workspace database when ``persist`` is on, else in memory; a database that
cannot be used is reported in ``problems`` and the agent goes on in memory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from .errors import StoreError
from .history import PromptHistory
from .knowledge.embeddings import shared_embedder
from .knowledge.memory_index import MemoryIndex
from .memory import ProjectMemory
from .redaction import public_url
from .session import Session
from .store.db import Database
from .store.sessions import SessionStore, normalize_origin
from .tools.todos import render_todos

log = logging.getLogger("nbagent.state")


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

    def todos_block(self) -> str:
        return render_todos(self.session.todos)

    def memory_block(self) -> str:
        return self.memory.render_memory() if self.memory else ""

    def remember_prompt(self, prompt: str) -> None:
        if self.history is not None:
            self.history.add(self.origin, prompt)

    def prompts(self) -> list[str]:
        """This notebook's or directory's prompt history, oldest first."""
        return self.history.list(self.origin) if self.history is not None else []

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
    selector = selector or config.session or "new"
    provider, model_name = describe_model(model, config)
    origin = normalize_origin(config.workspace, config.origin)
    problems: list[str] = []
    store = _open_store(config, problems) if config.persist else None
    if store is not None:
        session = store.open(selector, origin, provider=provider, model=model_name)
        db = store.db
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


def _open_store(config, problems: list[str]) -> SessionStore | None:
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
    return Session(messages=messages, title=session.title, origin=session.origin, provider=session.provider,
                   model=session.model, todos=list(session.todos) if whole else [],
                   turns=session.turns if whole else up_to_turn,
                   summary_index=session.summary_index if session.summary_index < len(messages) else 0)
