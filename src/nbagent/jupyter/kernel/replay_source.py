"""What restart-and-replay reads in a kernel: how long each cell took, which cells ran the agent, the notebook.

ShellBridge (nbagent.jupyter.kernel.bridge) answers nbagent.checkpoints.replay from here:

- ``CellClock`` watches the shell's cells (pre/post_run_cell, from when nbagent first built a bridge):
  each one's run time by execution count, and the cells during which the agent ran a kernel call
  from that very cell (``agent.run(...)`` or ``%agent --wait`` in a cell). Replaying such a cell would
  start the agent again, so the plan leaves it out, as it leaves out ``%agent`` cells.
- ``notebook_cells(shell)`` reads the notebook the kernel belongs to (nbagent.jupyter.kernel.notebook_path)
  through the stores the notebook tools use: the Jupyter server's live document when the kernel's
  server has nbagent's extension, else the file. None when the kernel has no notebook or it cannot be read.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

from ...render.redaction import logger

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

log = logger("nbagent.checkpoints")
_CLOCKS: "weakref.WeakKeyDictionary[Any, CellClock]" = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


class CellClock:
    """One shell's cells as they run: times by execution count, and the cells that ran the agent."""

    def __init__(self, shell: "InteractiveShell"):
        self.shell = shell
        self.times: dict[int, float] = {}
        """Seconds each of the user's cells took, by execution count."""
        self.agent_counts: set[int] = set()
        """Execution counts of cells during which the agent ran a kernel call from that cell."""
        self.running = False
        """Whether the main thread runs a user's cell now."""
        self._started: float | None = None

    @classmethod
    def of(cls, shell: "InteractiveShell") -> "CellClock":
        """The shell's clock, registered on its events the first time it is asked for."""
        with _GUARD:
            clock = _CLOCKS.get(shell)
            if clock is None:
                clock = _CLOCKS[shell] = cls(shell)
                shell.events.register("pre_run_cell", clock.pre)
                shell.events.register("post_run_cell", clock.post)
                # Made inside a cell (the first agent is often built in the cell that runs it): that
                # cell's pre_run_cell has passed, so see whether the main thread runs one now.
                clock.running = _in_frames(_main_frame(), ("IPython.",), "run_cell")
        return clock

    def pre(self, info: Any) -> None:
        if getattr(info, "store_history", False):  # a user's cell (kernel_run's code runs without history)
            self.running, self._started = True, time.perf_counter()

    def post(self, result: Any) -> None:
        info = getattr(result, "info", None)
        if not getattr(info, "store_history", False):
            return
        if result.execution_count and self._started is not None:
            self.times[int(result.execution_count)] = time.perf_counter() - self._started
        self.running, self._started = False, None

    def note_agent_call(self) -> None:
        """Called as the agent's kernel call starts: if the cell running now is the one that runs the
        agent (the main thread is inside nbagent: ``agent.run`` or ``%agent --wait``), mark it. A cell the
        user runs while a background turn works is the user's own and stays."""
        raw = getattr(self.shell.history_manager, "input_hist_raw", None)
        if not self.running or not raw:
            return
        if threading.current_thread() is threading.main_thread() or _in_frames(_main_frame(), ("nbagent.",)):
            # The running cell is the history's newest entry (IPython stores it before running it; when
            # it bumps execution_count differs between versions).
            self.agent_counts.add(len(raw) - 1)


def _main_frame() -> Any:
    """The frame the main thread (the one running cells) is in now."""
    return sys._current_frames().get(threading.main_thread().ident or 0)


def _in_frames(frame: Any, modules: tuple[str, ...], function: str | None = None) -> bool:
    """Whether a frame of ``modules`` (and of ``function``, if given) is on the stack from ``frame`` down."""
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith(modules) and \
                (function is None or frame.f_code.co_name == function):
            return True
        frame = frame.f_back
    return False


def notebook_cells(shell: "InteractiveShell") -> list[dict] | None:
    """The cells (nbformat JSON) of the notebook this kernel runs, as its store holds them now."""
    from ...errors import ToolError
    from ...tools import nbstores
    from .notebook_path import find_place
    from .server_client import connect

    place = find_place(shell)
    if place.notebook is None or not place.notebook.is_file():
        return None
    connect()  # the live document when the kernel's server has nbagent's extension (once per process)
    try:
        snap = nbstores.read(None, place.notebook, place.notebook.name)
    except (ToolError, OSError) as exc:  # unreadable or not a notebook: the plan uses the history alone
        log.warning("restart and replay: could not read %s: %s", place.notebook, exc)
        return None
    cells = [dict(c) for c in snap.notebook.get("cells", [])]
    if snap.legacy_ids:  # made-up ids would name cells the user cannot find
        for cell in cells:
            cell.pop("id", None)
    return cells
