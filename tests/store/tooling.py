"""A real ToolContext on a real workspace and state, and calling a tool the way the loop does."""

from __future__ import annotations

from nbagent.testing import tool_context
from nbagent.tools.context import ToolContext


def make_context(workspace, **config) -> ToolContext:
    return tool_context(workspace, **config)


def call(ctx: ToolContext, tool, **arguments) -> str:
    """Validate the arguments as the loop does, then run the tool."""
    return tool.fn(ctx, **tool.validate(arguments))
