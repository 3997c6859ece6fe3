"""A real ToolContext on a real workspace and state, and calling a tool the way the loop does."""

from __future__ import annotations

from nbagent.config import AgentConfig
from nbagent.procs import ProcessTracker
from nbagent.state import open_state
from nbagent.tools.context import ToolContext
from nbagent.workspace import Workspace


def make_context(workspace, **config) -> ToolContext:
    cfg = AgentConfig.load(workspace=workspace, **config)
    events: list = []
    ctx = ToolContext(workspace=Workspace(cfg.workspace), config=cfg, emit=events.append,
                      processes=ProcessTracker(), state=open_state(cfg), turn_id="t1")
    ctx.extras["events"] = events
    return ctx


def call(ctx: ToolContext, tool, **arguments) -> str:
    """Validate the arguments as the loop does, then run the tool."""
    return tool.fn(ctx, **tool.validate(arguments))
