"""The workspace: its root and path confinement, the state directory, safe reads and atomic writes, processes."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # ``from nbagent.workspace import Workspace`` kept working after workspace.py became this package.
    if name == "Workspace":
        from .root import Workspace

        return Workspace
    raise AttributeError(f"module 'nbagent.workspace' has no attribute {name!r}")
