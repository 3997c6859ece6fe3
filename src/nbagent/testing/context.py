"""Test helpers for tools and agents: a real ToolContext that records its events, and an agent factory.

    ctx = tool_context(tmp_path, approval="auto")
    output = run_tool(ctx, READ_FILE, path="a.py")
    assert ctx.events == [...]
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable

from ..config import AgentConfig
from ..workspace.procs import ProcessTracker
from ..engine.session_state import open_state
from ..tools.context import ToolContext
from ..workspace.root import Workspace


class RecordingContext(ToolContext):
    """A ToolContext whose ``events`` lists every event the tools emitted through it."""

    @property
    def events(self) -> list:
        return self.extras["events"]


def tool_context(root: Path | str, *, state: bool = True, turn_id: str = "t1", kernel: Any = None,
                 **config: Any) -> RecordingContext:
    """A ToolContext on a real workspace at ``root``: real configuration (``config`` over the defaults),
    a real process tracker and, unless ``state=False``, a real session state (in the workspace's
    database when persisting, else in memory). Close it with ``close_tool_context``."""
    cfg = AgentConfig.load(workspace=root, **config)
    events: list = []
    ctx = RecordingContext(workspace=Workspace(cfg.workspace), config=cfg, emit=events.append,
                           processes=ProcessTracker(), state=open_state(cfg) if state else None,
                           turn_id=turn_id, kernel=kernel)
    ctx.extras["events"] = events
    return ctx


def close_tool_context(ctx: ToolContext) -> None:
    """Kill what the tools started (processes, background tasks) and close the state."""
    from ..tools.tasks import TaskManager

    if ctx.processes is not None:
        ctx.processes.kill_all()
    TaskManager.for_workspace(ctx.workspace).stop_all()
    if ctx.state is not None:
        ctx.state.close()


async def arun_tool(ctx: ToolContext, tool, **arguments: Any) -> Any:
    """Validate the arguments as the runner does, then run the tool (awaiting it when async)."""
    result = tool.fn(ctx, **tool.validate(arguments))
    return await result if inspect.isawaitable(result) else result


def run_tool(ctx: ToolContext, tool, **arguments: Any) -> Any:
    """The same for a sync tool, from sync code."""
    result = tool.fn(ctx, **tool.validate(arguments))
    if inspect.isawaitable(result):
        raise TypeError(f"{tool.name} is async: use `await arun_tool(...)`")
    return result


def agent_factory(workspace: Path | str, **defaults: Any) -> tuple[Callable[..., Any], Callable[[], None]]:
    """``make(*replies, **options)`` builds an Agent on ``workspace`` with a ScriptedModel of ``replies``
    (or ``model=``), ``defaults`` under ``options``; ``close_all()`` closes every agent made."""
    from ..engine.agent import Agent
    from .scripted import ScriptedModel

    made: list = []

    def make(*replies: Any, **options: Any):
        model = options.pop("model", None) or ScriptedModel(list(replies))
        agent = Agent(model=model, **{"workspace": workspace, **defaults, **options})
        made.append(agent)
        return agent

    def close_all() -> None:
        for agent in made:
            agent.close()

    return make, close_all
