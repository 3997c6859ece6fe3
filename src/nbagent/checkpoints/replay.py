"""Restart and replay: what undo offers for kernel state it cannot put back in place.

An object the agent changed in place (or whose old value the memory cap released) cannot be bound
again; the kernel can still be rebuilt by clearing its namespace and running again the cells the user
ran before the agent's turn, each with the time it took. The plan is only a list until the user
confirms; ``replay`` then runs it in the user's kernel, in order, stopping at the first error. Never
automatic.

The plan comes from two sources, and each cell says which:

- the kernel's own execution history: what the user ran, in the order that built the kernel's state
  (cells deleted from the notebook since, or run in a console, included);
- the notebook the kernel belongs to: a history entry whose code is a code cell's source (whitespace
  normalised) is that cell, and the plan shows its id. Where the history holds nothing (none at all,
  or counts it lost, e.g. after ``%reset in``), the notebook's code cells with those stored
  ``execution_count`` values fill in, in that order. Run times: the history's timing (from when nbagent loaded), else the time
  JupyterLab recorded in the cell's metadata (``metadata.execution``, "record timing").

The agent's own code is never in it: kernel_run runs without history, and ``%agent`` cells (and the
cells the source marks as having run an agent turn) are left out.

The source (nbagent.jupyter.kernel.bridge.ShellBridge) gives ``history(upto)`` -> [(execution count,
code, seconds or None)], optionally ``history_counts(upto)`` (the counts whose code the history
holds, left out ones included), ``agent_counts()`` (the counts of cells that ran the agent) and ``notebook_cells()`` (the
notebook's cells as nbformat JSON, or None), ``reset()`` and ``run_code(code)``; a source with
neither history nor notebook has no plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..render.escape import escape_controls
from ..tools.nbdoc import ID_PATTERN

HISTORY = "history"
"""Origin: the kernel's execution history only (not in the notebook: deleted since, or run elsewhere)."""
NOTEBOOK = "notebook"
"""Origin: the notebook's code cell only, placed by its stored execution count (no history for it)."""
BOTH = "history+notebook"
"""Origin: a history entry matched to a notebook cell (the cell id is shown)."""


@dataclass
class ReplayCell:
    execution_count: int
    code: str
    seconds: float | None = None
    """How long the cell took when the user ran it (None: not timed, e.g. run before nbagent loaded)."""
    cell_id: str | None = None
    """The notebook cell this code is (None: not in the notebook)."""
    origin: str = HISTORY
    """Where the plan took it from: "history", "notebook" or "history+notebook"."""


@dataclass
class ReplayOutcome:
    ran: list[int] = field(default_factory=list)
    """Execution counts of the cells that ran without error, in order."""
    failed: int | None = None
    error: str | None = None
    failed_cell_id: str | None = None
    """The notebook cell id of the cell that failed, when it is in the notebook."""

    def stopped(self) -> str:
        """Where the replay stopped, as the user reads it (the cell's count, and its id when known)."""
        where = f", notebook cell {self.failed_cell_id}" if self.failed_cell_id else ""
        return f"replay stopped at cell [{self.failed}] (ran {len(self.ran)} before it{where})"


def replay_plan(source: Any, upto: int | None) -> list[ReplayCell]:
    """The cells the user ran before execution count ``upto`` (the agent's call), oldest first."""
    if upto is None:
        return []
    history = getattr(source, "history", None)
    entries = history(upto) if history is not None else []
    held = _history_counts(source, upto, entries)
    agent = getattr(source, "agent_counts", None)
    skipped = agent() if agent is not None else set()
    notebook = _code_cells(source)
    matcher = _Matcher(notebook)
    plan = [matcher.cell(count, code, seconds) for count, code, seconds in entries if count not in skipped]
    plan += [ReplayCell(count, code, seconds, cell_id, NOTEBOOK) for count, code, seconds, cell_id in notebook
             if count is not None and count < upto and count not in held and count not in skipped]
    return sorted(plan, key=lambda c: c.execution_count)  # stable: the notebook's order among equal counts


def plan_source(cells: list[ReplayCell]) -> str:
    """Which source the plan was made from, as the user reads it."""
    from_notebook = [c.execution_count for c in cells if c.origin == NOTEBOOK]
    matched = sum(c.origin == BOTH for c in cells)
    ids = f"; {matched} matched to notebook cells (id shown)" if matched else ""
    if not from_notebook:
        return "from the kernel's execution history" + ids
    if len(from_notebook) == len(cells):
        return ("from the notebook's code cells in the order of their stored execution counts "
                "(the kernel's history was not available)")
    low, high = min(from_notebook), max(from_notebook)
    span = f"In [{low}]" if low == high else f"In [{low}] to In [{high}]"
    return (f"from the kernel's execution history{ids}; {len(from_notebook)} cell(s) ({span}) from the "
            "notebook's stored execution counts (the history lost them)")


def describe_plan(cells: list[ReplayCell]) -> str:
    """The plan as the user reads it before confirming: where it comes from, then one line per cell
    with its recorded time and its notebook cell id."""
    if not cells:
        return "no cells to replay (the kernel's history before the turn is empty)"
    known = [c.seconds for c in cells if c.seconds is not None]
    if not known:  # "about 0.0 s and more" would understate cells that ran before nbagent's timing loaded
        total = "time not known (no cell was timed)"
    else:
        total = f"about {sum(known):.1f} s" + (" and more (some cells were not timed)" if len(known) < len(cells) else "")
    lines = [f"restart and replay would clear the kernel's variables and run {len(cells)} cell(s), {total},",
             f"{plan_source(cells)}:"]
    ids = any(c.cell_id for c in cells)  # no notebook (or no cell of it in the plan): no id column
    for cell in cells:
        code = cell.code.strip().splitlines() or [""]
        took = f"{cell.seconds:.2f} s" if cell.seconds is not None else "not timed"
        where = (f"cell {cell.cell_id}" if cell.cell_id else "not in the notebook") if ids else ""
        more = f"  (+{len(code) - 1} more line(s))" if len(code) > 1 else ""
        lines.append(f"  [{cell.execution_count}] {took:>10}  " + (f"{where:<24}  " if ids else "")
                     + escape_controls(code[0][:80]) + more)
        if cell.origin == NOTEBOOK and len(code) > 1:
            # not in this kernel's history: the notebook file's cell (a pull may have changed it), shown whole
            lines += [f"        | {escape_controls(line)}" for line in code[1:]]
    return "\n".join(lines)


def replay(source: Any, cells: list[ReplayCell]) -> ReplayOutcome:
    """Clear the namespace and run ``cells`` in order, stopping at the first error (call only on the
    user's confirmation)."""
    outcome = ReplayOutcome()
    source.reset()
    for cell in cells:
        result = source.run_code(cell.code)
        if result.get("error"):
            outcome.failed, outcome.error = cell.execution_count, str(result["error"])
            outcome.failed_cell_id = cell.cell_id
            return outcome
        outcome.ran.append(cell.execution_count)
    return outcome


# ----- the notebook's side -------------------------------------------------------------------

def normalised(code: str) -> str:
    """Code compared across sources: line endings, trailing spaces and blank edge lines do not count."""
    lines = [line.rstrip() for line in code.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def is_agent_cell(code: str) -> bool:
    """A prompt to the agent (``%agent``, ``%%agent``): its run is the agent's turn, never replayed."""
    return code.lstrip().startswith(("%agent", "%%agent"))


def cell_seconds(cell: dict) -> float | None:
    """The run time JupyterLab recorded in the cell ("record timing"): from ``iopub.execute_input``
    to ``shell.execute_reply`` in ``metadata.execution``; None when it did not record one."""
    timing = (cell.get("metadata") or {}).get("execution")
    if not isinstance(timing, dict):
        return None
    try:
        start = datetime.fromisoformat(str(timing["iopub.execute_input"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(timing["shell.execute_reply"]).replace("Z", "+00:00"))
        seconds = (end - start).total_seconds()
    except (KeyError, ValueError, TypeError):  # partly recorded or not a timestamp: untimed, not guessed
        return None
    return seconds if seconds >= 0 else None


def _code_cells(source: Any) -> list[tuple[int | None, str, float | None, str | None]]:
    """The notebook's code cells: (stored execution count or None, source, seconds, cell id), in
    notebook order; the agent's prompt cells are left out."""
    reader = getattr(source, "notebook_cells", None)
    cells = reader() if reader is not None else None
    found = []
    for cell in cells or []:
        if cell.get("cell_type") != "code":
            continue
        count = cell.get("execution_count")
        count = count if isinstance(count, int) and not isinstance(count, bool) else None
        code = _text(cell.get("source", ""))
        if code.strip() and not is_agent_cell(code):
            found.append((count, code, cell_seconds(cell), _valid_id(cell.get("id"))))
    return found


def _history_counts(source: Any, upto: int, entries: list) -> set[int]:
    """The execution counts below ``upto`` whose code the history holds (the notebook fills the others)."""
    held = getattr(source, "history_counts", None)
    return set(held(upto)) if held is not None else {count for count, _, _ in entries}


class _Matcher:
    """Finds the notebook cell a history entry is: same code, preferring the cell whose stored
    execution count is the entry's (the same code may sit in two cells)."""

    def __init__(self, notebook: list[tuple[int | None, str, float | None, str | None]]):
        self.by_code: dict[str, list[tuple[int | None, float | None, str | None]]] = {}
        for count, code, seconds, cell_id in notebook:
            self.by_code.setdefault(normalised(code), []).append((count, seconds, cell_id))

    def cell(self, count: int, code: str, seconds: float | None) -> ReplayCell:
        candidates = self.by_code.get(normalised(code))
        if not candidates:
            return ReplayCell(count, code, seconds)
        _, recorded, cell_id = next((c for c in candidates if c[0] == count), candidates[0])
        # Untimed by the history (run before nbagent loaded): the time JupyterLab recorded for that code.
        return ReplayCell(count, code, recorded if seconds is None else seconds, cell_id, BOTH)


def _valid_id(cell_id: Any) -> str | None:
    """The cell's id if it is one nbformat allows (a file is not trusted to keep to it: no id is shown
    rather than a control sequence)."""
    return cell_id if isinstance(cell_id, str) and ID_PATTERN.match(cell_id) else None


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)
