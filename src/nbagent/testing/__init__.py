"""Test doubles and helpers shipped with the package: scripted models, a scripted server, a ToolContext.

A scripted model and HTTP server stand in for real endpoints; ``tool_context`` gives a real
ToolContext that records the events its tools emit.

    from nbagent.testing import ScriptedModel, Reply, Call
    agent = Agent(model=ScriptedModel([Reply(tool_calls=[Call("glob", {"pattern": "*.py"})]), "Done."]))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .replies import BreakStream, Call, Fail, Recorded, Reply, Slow, Stall, call, calls, context_overflow, text
from .scripted import ScriptedModel

if TYPE_CHECKING:  # loaded on first use by __getattr__ below; named here for type checkers
    from .context import agent_factory, arun_tool, close_tool_context, run_tool, tool_context
    from .notebooks import scripted_endpoint
    from .server import ScriptedServer

__all__ = ["BreakStream", "Call", "Fail", "Recorded", "Reply", "ScriptedModel", "ScriptedServer", "Slow", "Stall",
           "agent_factory", "arun_tool", "call", "calls", "close_tool_context", "context_overflow", "run_tool",
           "scripted_endpoint", "text", "tool_context"]

_HELPERS = ("agent_factory", "arun_tool", "close_tool_context", "run_tool", "tool_context")


def __getattr__(name: str) -> Any:
    if name == "ScriptedServer":  # the HTTP server is loaded only when a test asks for it
        from .server import ScriptedServer

        return ScriptedServer
    if name == "scripted_endpoint":  # the example notebooks' stand-in endpoint (nbagent.testing.notebooks)
        from .notebooks import scripted_endpoint

        return scripted_endpoint
    if name in _HELPERS:  # they import the session and the tools: not needed to script a model
        from . import context

        return getattr(context, name)
    raise AttributeError(name)
