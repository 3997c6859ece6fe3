"""A session: the conversation's value model, its message log, and the state tools see around it."""

from __future__ import annotations

from typing import Any

_MODEL = ("Session", "SessionBackend", "NullBackend", "MemoryBackend")
_STATE = ("SessionState", "open_state", "describe_model")


def __getattr__(name: str) -> Any:
    # Lazy: the store imports the session model, and this package must not import the store back.
    if name in _MODEL:
        from . import model

        return getattr(model, name)
    if name in _STATE:
        from . import state

        return getattr(state, name)
    raise AttributeError(f"module 'nbagent.session' has no attribute {name!r}")
