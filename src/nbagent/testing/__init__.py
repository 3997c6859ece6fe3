"""Test doubles shipped with the package: an in-process scripted model and a scripted HTTP server.

    from nbagent.testing import ScriptedModel, Reply, Call
    agent = Agent(model=ScriptedModel([Reply(tool_calls=[Call("glob", {"pattern": "*.py"})]), "Done."]))
"""

from __future__ import annotations

from typing import Any

from .replies import BreakStream, Call, Fail, Recorded, Reply, Slow, Stall, call, calls, context_overflow, text
from .scripted import ScriptedModel

__all__ = ["BreakStream", "Call", "Fail", "Recorded", "Reply", "ScriptedModel", "ScriptedServer", "Slow", "Stall", "call",
           "calls", "context_overflow", "text"]


def __getattr__(name: str) -> Any:
    if name == "ScriptedServer":  # the HTTP server is loaded only when a test asks for it
        from .server import ScriptedServer

        return ScriptedServer
    raise AttributeError(name)
