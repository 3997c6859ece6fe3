"""nbagent inside Jupyter: the %agent magics, the live view, the server extension and the side panel.

``%load_ext nbagent`` registers %agent and %%agent. From code: ``current_agent()`` is the agent the
magics drive in this kernel, ``use_agent(agent)`` makes them drive one built in code (a custom
model, tools or approver), ``last_result()`` is the RunResult of the newest finished %agent turn and
``last_view()`` the newest live view. ``bridge_from_shell(shell)`` hands an Agent built in code this
kernel's namespace (``Agent(kernel=bridge_from_shell(get_ipython()))``) for the kernel tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["bridge_from_shell", "current_agent", "last_result", "last_view", "load_ipython_extension",
           "unload_ipython_extension", "use_agent"]


def load_ipython_extension(ipython: "InteractiveShell") -> None:
    from .kernel.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: "InteractiveShell") -> None:
    from .kernel.magics import unload_ipython_extension as unload

    unload(ipython)


def bridge_from_shell(shell: "InteractiveShell", *, allow_run: bool = True):
    """The bridge an Agent's kernel tools use on this shell's namespace (nbagent.jupyter.kernel.bridge);
    ``allow_run=False`` leaves kernel_run without a runner."""
    from .kernel.bridge import bridge_from_shell as bridge

    return bridge(shell, allow_run=allow_run)


def current_agent(shell: Any = None):
    """The Agent behind %agent in this kernel (built now if no %agent ran yet)."""
    return _magics(shell).keeper.get()


def use_agent(agent, shell: Any = None) -> None:
    """Make %agent drive ``agent`` from now on."""
    _magics(shell).keeper.use(agent)


def last_result(shell: Any = None):
    """The RunResult of the newest %agent turn that finished, or None."""
    return _magics(shell).keeper.last_result


def last_view(shell: Any = None):
    """The live view (TurnView) of the newest %agent turn shown with widgets, or None."""
    return _magics(shell).last_view


def _magics(shell: Any = None, required: bool = True) -> Any:
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    magics = shell.magics_manager.registry.get("AgentMagics") if shell is not None else None
    if magics is None and required:
        raise RuntimeError("the %agent magics are not loaded: run %load_ext nbagent first")
    return magics
