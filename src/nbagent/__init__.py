"""nbagent: an AI coding agent that lives inside Jupyter.

    from nbagent import Agent
    agent = Agent(workspace=".", model="gpt-4.1-mini")
    result = agent.run("What does this repository do?")

``%load_ext nbagent`` registers the %agent magics; the JupyterLab side panel
comes with the package. Jupyter pieces are imported only when used.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .config import DEFAULT, AgentConfig
from .errors import ToolError
from .events import Event

if TYPE_CHECKING:  # imported on first use below: pydantic's import is most of `import nbagent` (nbagent acp)
    from .tools.base import Tool, ToolSet, function_tool, tool

_TOOL_NAMES = ("Tool", "ToolSet", "function_tool", "tool")

if TYPE_CHECKING:  # loaded on first use by __getattr__ below; named here for type checkers and editors
    from .batching import batch
    from .engine.agent import Agent
    from .engine.result import RunResult
    from .evals import eval
    from .knowledge.stats import stats
    from .store.views import messages, sessions, tool_calls, usage

DISTRIBUTION = "jupyter-nbagent"  # the name on the package index; the import name stays nbagent
__version__: str  # read from the metadata on first use (see _version)

__all__ = ["Agent", "AgentConfig", "DEFAULT", "Event", "RunResult", "Tool", "ToolError", "ToolSet", "batch", "eval",
           "function_tool", "tool", "sessions", "messages", "tool_calls", "usage", "stats", "__version__"]


def _version() -> str:
    """The version of the code running: from a checkout (installed editable, or on PYTHONPATH) the one
    its pyproject.toml declares, since metadata written at install time may be older; otherwise the
    installed distribution's metadata."""
    import importlib.metadata
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        project = tomllib.loads(pyproject.read_text()).get("project", {})
        if project.get("name") == DISTRIBUTION and project.get("version"):
            return project["version"]
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"  # neither a checkout nor installed (copied in by hand): say so, do not guess


def __getattr__(name: str) -> Any:
    # Lazy: importing nbagent stays cheap, and the Agent's dependencies load on first use.
    if name == "__version__":
        globals()["__version__"] = found = _version()
        return found
    if name in _TOOL_NAMES:
        from .tools import base

        globals().update({n: getattr(base, n) for n in _TOOL_NAMES})
        return globals()[name]
    if name == "Agent":
        from .engine.warmup import settle

        settle()  # never import the engine beside a running warm-up (see nbagent.engine.warmup)
        from .engine.agent import Agent

        return Agent
    if name == "RunResult":
        from .engine.result import RunResult

        return RunResult
    if name == "stats":
        from .knowledge.stats import stats

        return stats
    if name == "batch":
        from .batching import batch

        if "ipykernel" in sys.modules:  # inside a Jupyter kernel a batch draws its progress as a widget
            from .jupyter.widgets import batch_progress  # noqa: F401

        return batch
    if name == "eval":
        from .evals import eval as run_eval

        if "ipykernel" in sys.modules:  # inside a Jupyter kernel the report renders in the cell
            from .jupyter.widgets import eval_report  # noqa: F401

        return run_eval
    if name in ("sessions", "messages", "tool_calls", "usage"):
        from .store import views as api

        return getattr(api, name)
    raise AttributeError(f"module 'nbagent' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    from .jupyter.kernel.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .jupyter.kernel.magics import unload_ipython_extension as unload

    unload(ipython)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "nbagent.jupyter.server"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "jupyter/labextension", "dest": "nbagent-labextension"}]
