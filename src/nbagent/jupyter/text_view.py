"""The text view: turns printed as text where there are no widgets (terminal IPython, nbconvert, scripts).

It is the terminal front end of ``nbagent.terminal`` in a kernel or an IPython shell: the same
renderer and approver as the CLI, with the answer and the activity in one stream, and Markdown
rendered only when stdout is a terminal (never into a notebook's stored output).
"""

from __future__ import annotations

import sys

from .. import events as ev
from ..display import escape_controls
from ..terminal import TerminalApprover, TerminalRenderer


def text_renderer(out=None) -> TerminalRenderer:
    """A renderer for one turn; Markdown for the terminal only when ``out`` (default stdout) is one."""
    stream = out or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return TerminalRenderer(markdown=bool(isatty and isatty()))


def text_approver() -> TerminalApprover:
    """Asks with ``input()``: the terminal, or a notebook's input box; nbconvert has neither (denied)."""
    return TerminalApprover(input, out=sys.stdout,
                            unattended="use --approval auto or read-only in unattended notebooks")


class TextFollower:
    """Prints the agent's turns as text as they happen (terminal IPython, scripts)."""

    def __init__(self, agent, out=None):
        self._out = out or sys.stdout
        self._renderers: dict[str, TerminalRenderer] = {}
        self._unsubscribe = agent.subscribe(self._on_event)

    def _on_event(self, event: ev.Event) -> None:
        renderer = self._renderers.get(event.turn_id)
        if renderer is None:
            renderer = self._renderers[event.turn_id] = text_renderer(self._out)
        if isinstance(event, ev.TurnStart):
            self._out.write(f"» {escape_controls(event.prompt)}\n")
        text = renderer.render(event).text
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
