"""The text view: turns printed as text where there are no widgets (terminal IPython, nbconvert, scripts).

It is the shared text renderer (``nbagent.render.terminal``) in a kernel or an IPython shell: the same
renderer and approver as the CLI, with the answer and the activity in one stream, and Markdown
rendered only when stdout is a terminal (never into a notebook's stored output). Like every front end
it starts from the agent's snapshot and applies the events that follow (``Agent.watch``).
"""

from __future__ import annotations

import sys
import threading

from ... import events as ev
from ...render.agent_state import AgentState
from ...render.terminal import TerminalRenderer
from ...tools.approvals import mode_line
from ...tools.terminal_approver import TerminalApprover


def text_renderer(out=None, *, state: AgentState | None = None, follow: str | None = None,
                  show_prompt: bool = False) -> TerminalRenderer:
    """A renderer from ``state`` on; Markdown for the terminal only when ``out`` (default stdout) is one."""
    stream = out or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return TerminalRenderer(markdown=bool(isatty and isatty()), state=state, follow=follow,
                            show_prompt=show_prompt)


class ModeLines:
    """The mode line (the approval mode and whether the sandbox is on, as every front end shows it) for a
    text turn: printed before an agent's first one, and again when the mode changed since."""

    def __init__(self) -> None:
        self._shown: dict[int, str] = {}

    def header(self, agent) -> str:
        line = f"[{mode_line(agent.config.approval)}]\n"
        if self._shown.get(id(agent)) == line:
            return ""
        self._shown[id(agent)] = line
        return line


def text_approver(out=None) -> TerminalApprover:
    """Asks with ``input()``: the terminal, or a notebook's input box; nbconvert has neither (denied)."""
    return TerminalApprover(input, out=out or sys.stdout,
                            unattended="run %agent --approval auto in unattended notebooks")


class TextBlock:
    """A waiting cell's turn as one output, for a kernel with no widget front end (nbconvert, nbclient,
    nbval, jupyter console): printed as it streamed, each tick's chunk would be an output of its own, and a
    stored notebook would hold the turn in a hundred pieces. So the text is kept and written in one piece
    when the turn ends, or before a question that needs it on screen (``release``). Live progress is the
    widget view's (any widget front end) and the terminal's (terminal IPython prints as it streams).
    Display updates would keep it live, but nbval ignores them, so a tested notebook could never match.
    File-like (``write``/``flush``), so the approver can write its notes into the same block."""

    def __init__(self, out=None):
        self._out = out
        self._pending: list[str] = []

    def write(self, text: str) -> int:
        self._pending.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def release(self) -> None:
        """Write what was kept, in one write."""
        text, self._pending = "".join(self._pending), []
        if text:
            out = self._out or sys.stdout
            out.write(text)
            out.flush()


class TextFollower:
    """Prints the agent's turns as text as they happen: the turn in flight so far, then what follows.

    ``follow``: one turn only (it stops at that turn's end); otherwise every turn, with its prompt.
    """

    def __init__(self, agent, out=None, *, follow: str | None = None, header: str = ""):
        self._out = out or sys.stdout
        self._follow = follow
        self._ready = threading.Lock()  # events wait until the renderer holds the snapshot they follow
        with self._ready:
            state, self._unsubscribe = agent.watch(self._on_event)
            self._renderer = text_renderer(self._out, state=state, follow=follow, show_prompt=follow is None)
            self._write(header + self._renderer.catch_up().text)

    def _on_event(self, event: ev.AnyEvent) -> None:
        with self._ready:
            self._write(self._renderer.render(event).text)
        if self._follow is not None and isinstance(event, ev.TurnEnd) and event.turn_id == self._follow:
            self._unsubscribe()

    def _write(self, text: str) -> None:
        if text:
            self._out.write(text)
            self._out.flush()

    def clear(self) -> None:
        pass

    def close(self) -> None:
        self._unsubscribe()

    def __repr__(self) -> str:
        return "<nbagent text view: turns print as they happen>"
