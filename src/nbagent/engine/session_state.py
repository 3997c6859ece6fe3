"""SessionState: what tools see around the session (store, project memory, prompt history), and how it opens.

``SessionState`` is what tools see as ``ctx.state``: the session, the workspace
store, the project memory (None when memory is off), the prompt history and a
slot for the background-task manager. ``open_state`` builds it from a
configuration: sessions in the workspace database when ``persist`` is on, else
in memory; a database that cannot be used is reported in ``problems`` and the
agent goes on in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..render.redaction import logger
from ..session.model import Session, fork_in_memory

if TYPE_CHECKING:
    from ..store.db import Database
    from ..store.history import PromptHistory
    from ..memory.entries import ProjectMemory
    from ..store.sessions import SessionStore

log = logger("nbagent.session")


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

    @property
    def database(self) -> "Database | None":
        """The database holding the session: the workspace's, or the in-memory one (persist off)."""
        return self.store.db if self.store is not None else self._db

    def open_memory(self, config: Any) -> "ProjectMemory | None":
        """Project memory on this state's database (when memory is switched on later)."""
        from ..memory.entries import project_memory

        db = self.database
        return project_memory(db, config) if db is not None else None

    def fork(self, up_to_turn: int | None = None) -> "SessionState":
        """A state on a new session holding this one's history up to a turn (all of it by default)."""
        if self.store is not None:
            session = self.store.fork(self.session.id, up_to_turn)
        else:
            session = fork_in_memory(self.session, up_to_turn)
        return SessionState(session=session, store=self.store, memory=self.memory, history=self.history,
                            tasks=self.tasks, origin=self.origin, problems=list(self.problems), _db=self._db)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        elif self._db is not None:
            self._db.close()


def open_state(config, model: Any = None, selector: str | None = None) -> SessionState:
    """The state of an agent: ``config.persist``, ``config.memory`` and ``config.origin`` decide."""
    from ..memory.entries import project_memory
    from ..store.db import open_database
    from ..store.history import PromptHistory
    from ..store.sessions import normalize_origin

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
        db = open_database()
    memory = project_memory(db, config) if config.memory else None
    if memory is not None:
        memory.index.warm()  # in the background: the embedder loads, rows left unembedded are embedded
    return SessionState(session=session, store=store, memory=memory, history=PromptHistory(db), origin=origin,
                        problems=problems, _db=None if store is not None else db)


def _open_store(config, problems: list[str]) -> "SessionStore | None":
    from ..store.sessions import SessionStore

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
    from ..render.redaction import public_url

    name = getattr(model, "name", None) or getattr(config, "model", None) or ""
    base_url = getattr(model, "base_url", None) or getattr(config, "base_url", None)
    provider = public_url(base_url) or getattr(model, "provider", "") or ""
    return str(provider), str(name)


