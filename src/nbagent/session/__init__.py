"""A session: the conversation's value model and its message log (the store imports it; it imports no store).

What tools see around the session (store, memory, history) is nbagent.engine.session_state, which
wires the session to the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names __all__ promises, for type checkers (the import itself stays lazy)
    from .model import MemoryBackend, NullBackend, Session, SessionBackend

__all__ = ["Session", "SessionBackend", "NullBackend", "MemoryBackend"]


def __getattr__(name: str) -> Any:
    # Lazy: the store imports the session model, and importing the package stays cheap.
    if name in __all__:
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module 'nbagent.session' has no attribute {name!r}")
