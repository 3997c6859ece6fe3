"""What the kernel already knows, as an attached source: the last cells run and the last traceback.

The source holds the last cells run (In, a short Out) and the last exception's traceback (what ``%tb``
shows).

``%agent`` attaches it to its session by default, and visibly: it is the source named ``kernel``, listed
by ``/context`` and announced by a note. After every cell it is pushed again (a new revision only when
the text changed) and the agent's kernel-variable sources are refreshed. Cells that are themselves
``%agent`` prompts are left out. ``/context remove kernel`` declines it for the session.

A turn gets the history as it was when its prompt was given, not when the turn starts (a queued
prompt, or one given while the agent starts): the history is taken with the prompt and pushed at that
turn's start, just before its absorb, and cells run while a prompt waits are held back until the
turns waiting have absorbed theirs (the next prompt gets them).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ... import events as ev
from ...attached.records import Output, SourceError, one_line
from ...render.escape import strip_ansi, truncate
from ...render.redaction import logger

SOURCE = "kernel"
WHY = "the kernel's recent history (last cells and the last traceback), attached by %agent"
CELLS = 5
CODE_MAX = 1_500
OUT_MAX = 300
TRACEBACK_MAX = 4_000


class KernelHistory:
    """Watches one shell's cells; ``sync(agent)`` keeps the agent's ``kernel`` source up to date."""

    def __init__(self, shell: Any, keeper: Any):
        self.shell = shell
        self.keeper = keeper
        self.errors: dict[int, str] = {}
        """Execution count -> the one-line error of that cell."""
        self.error_cell: int | None = None
        self.traceback = ""
        """The last failing cell's traceback, formatted when it failed (as %tb would show it)."""
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[int, str, str] | None] = {}
        """Turn id -> the history taken when its prompt was given (None: pushed then), until its start."""
        self._held: tuple[int, str, str] | None = None
        """The newest history taken after a cell while turns waited: pushed once none waits."""
        self._taken = self._pushed = 0
        """Serials of the histories taken and of the newest pushed: an older one is never pushed after it."""
        self._watched: tuple[Any, Callable[[], None]] | None = None

    def register(self) -> None:
        self.shell.events.register("post_run_cell", self.after_cell)

    def unregister(self) -> None:
        try:
            self.shell.events.unregister("post_run_cell", self.after_cell)
        except ValueError:
            pass

    def after_cell(self, result: Any) -> None:
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        count = getattr(result, "execution_count", None)
        raw = getattr(getattr(result, "info", None), "raw_cell", "") or ""
        if error is not None and not _is_agent_cell(raw):
            if count is not None:
                self.errors[count] = f"{type(error).__name__}: {error}"
            self.error_cell = count
            self.traceback = self._format(error)
        agent = self.keeper.agent
        if agent is None or agent.closed:
            return  # no agent (yet, or any more): nothing to attach to, and the hook must never build one
        try:
            taken = self._take()
            with self._lock:
                if self._waiting:  # a prompt given before this cell waits for its turn: not in its context
                    self._held = taken
                    taken = None
            if taken is not None:
                self._push(agent, taken)
            agent.context.refresh_kernel()
        except Exception:  # a post-cell hook must never break the user's cell
            import logging

            logger("nbagent.context").warning("kernel context not refreshed", exc_info=True)

    def sync(self, agent: Any) -> None:
        """Attach the ``kernel`` source to the agent's session (unless declined) and push the history."""
        self._push(agent, self._take())

    def for_prompt(self, agent: Any, turn_id: str) -> None:
        """A prompt is given as ``turn_id``: its turn gets the history as it is now. Pushed now when no
        earlier prompt waits for its turn, else at this turn's start (just before its absorb)."""
        self._watch(agent)
        taken = self._take()
        with self._lock:
            self._held = None  # taken later than anything held
            self._waiting[turn_id] = taken if self._waiting else None
            push_now = len(self._waiting) == 1
        if push_now:
            self._push(agent, taken)

    def _watch(self, agent: Any) -> None:
        if self._watched is not None and self._watched[0] is agent:
            return
        if self._watched is not None:
            self._watched[1]()
        self._watched = (agent, agent.subscribe(lambda event: self._on_event(agent, event)))

    def _on_event(self, agent: Any, event: Any) -> None:
        """On the agent's thread: a waiting turn starts (its history goes in before its absorb), or a turn
        ended with none waiting (what cells ran meanwhile goes in for the next prompt)."""
        if not isinstance(event, (ev.TurnStart, ev.TurnEnd)):
            return
        with self._lock:
            if isinstance(event, ev.TurnStart):
                taken = self._waiting.pop(event.turn_id, None)
            else:
                self._waiting.pop(event.turn_id, None)  # a prompt dropped before its start (abort)
                taken, self._held = (self._held, None) if not self._waiting else (None, self._held)
        if taken is not None:
            try:
                self._push(agent, taken)
            except Exception:  # never break the turn over its context
                logger("nbagent.context").warning("kernel history not pushed", exc_info=True)

    def _take(self) -> tuple[int, str, str]:
        """The history now (on the kernel's thread, which owns the shell), numbered."""
        with self._lock:
            self._taken += 1
            serial = self._taken
        return serial, self.text(), self.summary()

    def _push(self, agent: Any, taken: tuple[int, str, str]) -> None:
        store, session = agent.context.store, agent.session_id
        if store.get(SOURCE, session) is None:
            if store.is_declined(session, SOURCE):
                return
            try:
                store.attach(SOURCE, "kernel", scope=session, why=WHY, auto=True)
            except SourceError:
                return
        serial, text, summary = taken
        with self._lock:
            if serial < self._pushed:
                return
            self._pushed = serial
            if text:
                store.push(SOURCE, Output(text=text, summary=summary), session_id=session, kind="kernel")

    def summary(self) -> str:
        """The note's one line: the newest error if there is one, else how far the history goes."""
        counts = sorted(self.errors)
        if self.traceback and self.error_cell is not None and self.error_cell in self.errors:
            return one_line(f"error in In [{self.error_cell}]: {self.errors[self.error_cell]}")
        raw = getattr(self.shell.history_manager, "input_hist_raw", []) or []
        return f"recent cells up to In [{max(len(raw) - 1, *counts, 0)}], no error"

    def text(self) -> str:
        parts = []
        cells = self._cells()
        if cells:
            parts.append(f"Kernel history (the last {len(cells)} cells run, oldest first; Out is the cell's value):")
            parts += cells
        traceback = self.traceback
        if traceback:
            where = f" (in cell In [{self.error_cell}])" if self.error_cell else ""
            parts.append(f"Last exception{where}, as %tb shows it:\n{traceback}")
        return "\n\n".join(parts)

    def _cells(self) -> list[str]:
        raw = list(getattr(self.shell.history_manager, "input_hist_raw", []) or [])
        outputs = self.shell.user_ns.get("Out", {}) or {}
        shown: list[str] = []
        for count in range(len(raw) - 1, 0, -1):
            code = raw[count].strip()
            if not code or _is_agent_cell(code):
                continue
            cell = f"In [{count}]:\n{truncate(code, CODE_MAX)}"
            if count in self.errors:
                cell += f"\nError: {truncate(self.errors[count], OUT_MAX)}"
            elif count in outputs:
                cell += f"\nOut[{count}]: {truncate(_safe_repr(outputs[count]), OUT_MAX)}"
            shown.append(cell)
            if len(shown) == CELLS:
                break
        return shown[::-1]

    def _format(self, error: BaseException) -> str:
        etype, value, tb = type(error), error, error.__traceback__
        try:
            lines = self.shell.InteractiveTB.structured_traceback(etype, value, tb)
            text = strip_ansi("\n".join(lines))
        except Exception:  # a traceback formatter that fails: the plain one is better than none
            import traceback

            text = "".join(traceback.format_exception(etype, value, tb))
        return text if len(text) <= TRACEBACK_MAX else "…\n" + text[-TRACEBACK_MAX:]


def _is_agent_cell(code: str) -> bool:
    return code.lstrip().startswith(("%agent", "%%agent"))




def _safe_repr(value: Any) -> str:
    try:
        return " ".join(repr(value).split())
    except Exception as exc:  # a broken __repr__ in user code
        return f"<{type(value).__name__}: repr failed: {exc}>"
