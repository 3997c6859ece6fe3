"""Restart and replay: what undo offers for kernel state it cannot put back in place.

An object the agent changed in place (or whose old value the memory cap released) cannot be bound
again; the kernel can still be rebuilt by clearing its namespace and running again the cells the user
ran before the agent's turn, from the kernel's own execution history, each with the time it took. The
plan is only a list until the user confirms; ``replay`` then runs it in the user's kernel, in order,
stopping at the first error. Never automatic.

The source (nbagent.jupyter.kernel.bridge.ShellBridge) gives ``history(upto)`` -> [(execution count,
code, seconds or None)], ``reset()`` and ``run_code(code)``; a source without them has no plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ReplayCell:
    execution_count: int
    code: str
    seconds: float | None = None
    """How long the cell took when the user ran it (None: not timed, e.g. run before nbagent loaded)."""


@dataclass
class ReplayOutcome:
    ran: list[int] = field(default_factory=list)
    """Execution counts of the cells that ran without error, in order."""
    failed: int | None = None
    error: str | None = None


def replay_plan(source: Any, upto: int | None) -> list[ReplayCell]:
    """The cells the user ran before execution count ``upto`` (the agent's call), oldest first."""
    history = getattr(source, "history", None)
    if history is None or upto is None:
        return []
    return [ReplayCell(count, code, seconds) for count, code, seconds in history(upto)]


def describe_plan(cells: list[ReplayCell]) -> str:
    """The plan as the user reads it before confirming: one line per cell with its recorded time."""
    if not cells:
        return "no cells to replay (the kernel's history before the turn is empty)"
    known = [c.seconds for c in cells if c.seconds is not None]
    total = f"about {sum(known):.1f} s" + (" and more (some cells were not timed)" if len(known) < len(cells) else "")
    lines = [f"restart and replay would clear the kernel's variables and run {len(cells)} cell(s), {total}:"]
    for cell in cells:
        first = cell.code.strip().splitlines()[0] if cell.code.strip() else ""
        took = f"{cell.seconds:.2f} s" if cell.seconds is not None else "not timed"
        lines.append(f"  [{cell.execution_count}] {took:>10}  {first[:80]}")
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
            return outcome
        outcome.ran.append(cell.execution_count)
    return outcome
