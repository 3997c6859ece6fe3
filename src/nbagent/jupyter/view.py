"""``agent.view()``: the live view of every turn an agent runs from now on (and the one running).

With a widget frontend it is an AgentView (a box that gains a TurnView per turn); without one
the turns print as text as they happen.
"""

from __future__ import annotations

import sys

from .. import events as ev
from .frontend import use_widgets
from .text_view import TextRenderer


def show_agent_view(agent, mode: str | None = None):
    """Display the live view of ``agent``'s turns and return it (``.close()`` stops following)."""
    shell = _shell()
    if mode is None and shell is not None:
        from .config import NbAgent

        mode = NbAgent(parent=shell).view
    if use_widgets(mode, shell):
        from IPython.display import display

        from .widgets.agent_view import AgentView

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


class TextFollower:
    """Prints the agent's turns as text as they happen (terminal IPython, scripts)."""

    def __init__(self, agent, out=None):
        self._out = out or sys.stdout
        self._renderers: dict[str, TextRenderer] = {}
        self._unsubscribe = agent.subscribe(self._on_event)

    def _on_event(self, event: ev.Event) -> None:
        renderer = self._renderers.setdefault(event.turn_id, TextRenderer())
        if isinstance(event, ev.TurnStart):
            self._out.write(f"» {event.prompt}\n")
        text = renderer.render(event)
        if text:
            self._out.write(text)
            self._out.flush()
        if isinstance(event, ev.TurnEnd):
            self._renderers.pop(event.turn_id, None)

    def clear(self) -> None:
        pass

    def close(self) -> None:
        self._unsubscribe()

    def __repr__(self) -> str:
        return "<nbagent text view: turns print as they happen>"
