"""nbagent: an AI coding agent that lives inside Jupyter.

    from nbagent import Agent
    agent = Agent(workspace=".", model="gpt-4.1-mini")
    result = agent.run("What does this repository do?")

``%load_ext nbagent`` registers the %agent magics; the JupyterLab side panel
comes with the package. Jupyter pieces are imported only when used.
"""

from __future__ import annotations

from typing import Any

from .config import DEFAULT, AgentConfig
from .events import Event
from .tools.base import Tool, ToolSet, function_tool, tool

__version__ = "0.1.0"
__all__ = ["Agent", "AgentConfig", "DEFAULT", "Event", "RunResult", "Tool", "ToolSet", "batch", "function_tool", "tool",
           "sessions", "messages", "tool_calls", "usage", "stats", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: importing nbagent stays cheap, and the Agent's dependencies load on first use.
    if name == "Agent":
        from .warmup import settle

        settle()  # never import the engine beside a running warm-up (see nbagent.warmup)
        from .agent import Agent

        return Agent
    if name == "RunResult":
        from .result import RunResult

        return RunResult
    if name == "stats":
        from .knowledge.stats import stats

        return stats
    if name == "batch":
        from .batching import batch

        return batch
    if name in ("sessions", "messages", "tool_calls", "usage"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'nbagent' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    from .jupyter.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .jupyter.magics import unload_ipython_extension as unload

    unload(ipython)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "nbagent.jupyter.server"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "jupyter/labextension", "dest": "nbagent-labextension"}]
