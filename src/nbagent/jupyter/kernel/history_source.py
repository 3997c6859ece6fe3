"""What the kernel already knows, as an attached source: the last cells run and the last traceback.

The source holds the last cells run (In, a short Out) and the last exception's traceback (what ``%tb``
shows).

``%agent`` attaches it to its session by default, and visibly: it is the source named ``kernel``, listed
by ``/context`` and announced by a note. After every cell it is pushed again (a new revision only when
the text changed) and the agent's kernel-variable sources are refreshed. Cells that are themselves
``%agent`` prompts are left out. ``/context remove kernel`` declines it for the session.
"""

from __future__ import annotations

from typing import Any

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
            self.sync(agent)
            agent.context.refresh_kernel()
        except Exception:  # a post-cell hook must never break the user's cell
            import logging

            logger("nbagent.context").warning("kernel context not refreshed", exc_info=True)

    def sync(self, agent: Any) -> None:
        """Attach the ``kernel`` source to the agent's session (unless declined) and push the history."""
        store, session = agent.context.store, agent.session_id
        if store.get(SOURCE, session) is None:
            if store.is_declined(session, SOURCE):
                return
            try:
                store.attach(SOURCE, "kernel", scope=session, why=WHY, auto=True)
            except SourceError:
                return
        text = self.text()
        if text:
            store.push(SOURCE, Output(text=text, summary=self.summary()), session_id=session, kind="kernel")

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
