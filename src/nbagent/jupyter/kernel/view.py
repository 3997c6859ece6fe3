"""``agent.view()``: the live view of every turn an agent runs from now on (and the one running).

With a widget frontend it is an AgentView (a box that gains a TurnView per turn); without one
the turns print as text as they happen.
"""

from __future__ import annotations

from .frontend import use_widgets
from .text_view import TextFollower


def show_agent_view(agent, mode: str | None = None):
    """Display the live view of ``agent``'s turns and return it (``.close()`` stops following)."""
    shell = _shell()
    if mode is None and shell is not None:
        from .config import NbAgent

        mode = NbAgent(parent=shell).view
    if use_widgets(mode, shell):
        from IPython.display import display

        from ..widgets.agent_view import AgentView

        view = AgentView(agent)
        display(view)
        return view
    return TextFollower(agent)


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()
