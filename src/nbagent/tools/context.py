"""What a running tool may use: the workspace, the configuration, the event sink and session state."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..config import AgentConfig
    from ..events import AnyEvent
    from ..workspace.procs import ProcessTracker
    from ..workspace.root import Workspace


CALLER: ContextVar[str] = ContextVar("nbagent_tool_caller", default="")
"""The outside caller a served call runs for (an MCP session's id, set by nbagent.mcp_server.serve): the served
kernel tools keep each caller's kernel record apart. "" for the agent's own calls and a stdio client."""


@dataclass
class ToolContext:
    workspace: "Workspace"
    config: "AgentConfig"
    emit: Callable[["AnyEvent"], None]
    processes: "ProcessTracker"
    """Every child process a tool starts is tracked here, so Stop and Abort can kill its tree."""
    call_id: str = ""
    turn_id: str = ""
    state: Any = None
    """The session's state (todos, memory, tasks, store); see nbagent.engine.session_state.SessionState."""
    kernel: Any = None
    """A bridge to the live kernel's namespace when the agent runs inside one, else None."""
    extras: dict[str, Any] = field(default_factory=dict)
    sink: Any = None
    """This call's nbagent.images.ImageSink, once a tool asked for it (image_sink)."""

    def for_call(self, call_id: str) -> "ToolContext":
        from dataclasses import replace

        return replace(self, call_id=call_id, sink=None)

    def image_sink(self) -> Any:
        """The sink that keeps the images this call shows the model (made on first use)."""
        if self.sink is None:
            from ..images import ImageSink

            self.sink = ImageSink(getattr(self.config, "image_max_side", 1024))
        return self.sink
