"""The agent's checkpoint calls: undo, redo, the checkpoint and kernel-change tables, diff, replay.

``Agent.undo()`` and its siblings delegate here (docs/python-api.md, "Undo and redo"). The work is the
runtime's and its TurnGuard's (nbagent.checkpoints.turn_guard); this object only runs what changes
things on the agent's thread while no turn runs (``call_idle``) and shapes what people read as
DataFrames. It reads ``runtime.guard`` on every call, never keeps it: a session switch replaces it.
"""

from __future__ import annotations

from typing import Any, Callable

from .runtime import AgentRuntime

CHECKPOINT_COLUMNS = ["turn", "time", "files changed", "files", "undone"]
KERNEL_CHANGE_COLUMNS = ["turn", "call_id", "name", "change", "undone", "restorable"]


class AgentCheckpoints:
    """Undo and redo of one agent's turns, files and kernel variables alike (docs/checkpoints.md)."""

    def __init__(self, runtime: AgentRuntime, call_idle: Callable[..., Any]):
        self._runtime = runtime
        self._call_idle = call_idle
        """Runs a function on the agent's thread once no turn runs (refuses while one does)."""

    def undo(self, force: bool = False, turn: int | None = None, only=None):
        if only is not None:  # rows of a turn (its review), not the whole turn
            return self._call_idle(self._runtime.review, "undo", turn, _listed(only))
        return self._call_idle(self._runtime.undo, force, turn)

    def keep(self, only=None, turn: int | None = None):
        return self._call_idle(self._runtime.review, "keep", turn, None if only is None else _listed(only))

    def changes(self, turn: int | None = None):
        from ..checkpoints.changes import Changes

        review = self._runtime.guard.review
        return review.changes(turn) if review is not None else Changes([])

    def redo(self, force: bool = False, turn: int | None = None, only=None):
        if only is not None:
            return self._call_idle(self._runtime.review, "redo", turn, _listed(only))
        return self._call_idle(self._runtime.redo, force, turn)

    def table(self):
        """The session's checkpoints, oldest first, as a DataFrame of CHECKPOINT_COLUMNS."""
        import pandas as pd

        rows = [{"turn": e.turn, "time": pd.Timestamp(e.time, unit="s", tz="UTC"),
                 "files changed": len(e.files), "files": list(e.files), "undone": e.undone}
                for e in self._runtime.guard.checkpoints.list()]
        return pd.DataFrame(rows, columns=CHECKPOINT_COLUMNS)

    def kernel_changes(self, turn: int | None = None):
        """One row per name and kernel call (all turns, or ``turn``), as a DataFrame of KERNEL_CHANGE_COLUMNS."""
        import pandas as pd

        ledger = self._runtime.guard.kernel
        records = ledger.records if ledger is not None else []
        rows = [row for r in records if turn is None or r.turn == turn for row in _change_rows(r)]
        return pd.DataFrame(rows, columns=KERNEL_CHANGE_COLUMNS)

    def replay(self, cells=None):
        from ..checkpoints.replay import replay

        runtime = self._runtime
        if runtime.kernel is None:  # outside the kernel: the kernel whose undo offered the plan runs it
            return self._call_idle(runtime.guard.replay, None if cells is None else list(cells))
        if cells is None:
            raise ValueError("replay takes the cells of an undo's Restored.replay")
        return self._call_idle(replay, runtime.kernel, list(cells))

    def replay_offered(self) -> int | None:
        offer = getattr(self._runtime.guard.kernel, "offer", None)
        return offer.turn if offer is not None else None

    def diff(self, turn: int) -> str:
        return self._runtime.guard.checkpoints.diff(turn)


def _listed(only) -> list:
    """``only`` as a list: one row, id, path or cell id alone, or several (a Changes, a list)."""
    from ..checkpoints.changes import ChangeRow

    return [only] if isinstance(only, (str, ChangeRow)) else list(only)


def _change_rows(record) -> list[dict[str, Any]]:
    """A kernel call's record as rows: one per name it added, rebound, deleted, mutated or left unchecked."""
    rows = []
    for change, names in (("added", record.added), ("rebound", record.rebound), ("deleted", record.deleted),
                          ("mutated", record.mutated), ("unchecked", record.unchecked)):
        for name in names:
            # A value undo can bind again: an added name goes away; a rebound or deleted one comes back
            # unless the memory cap released its old value (``dropped``).
            restorable = change == "added" or (change in ("rebound", "deleted") and name not in record.dropped)
            rows.append({"turn": record.turn, "call_id": record.call_id, "name": name, "change": change,
                         "undone": record.undone, "restorable": restorable})
    return rows
