"""The notebook operations that take back (or re-apply) some rows of a turn's notebook changes.

Given the notebook's cells before and after the turn, the cells as they are now (in the open notebook
when one is open) and the rows picked, this returns the operations for a notebook store
(nbagent.tools.nbdoc) and, for each row it refuses, why. A row is refused when its cell was changed
since the turn (or since the review last left it); each operation carries the token of the cell as
read here, so a change typed between this read and the write is refused by the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..tools.nbdoc import token_of
from .changes import Spec
from .hunks import revise
from .notebooks import _run_state, _text

CHANGED = "changed since the turn (someone edited it): left as it is"


@dataclass
class Plan:
    ops: list[dict] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    """Row id -> why it was not restored."""


def plan(old: list[dict], new: list[dict], current: list[dict], picked: dict[str, Spec],
         undone_hunks: dict[str, set[int]], undo: bool) -> Plan:
    """``picked``: row id -> spec; ``undone_hunks``: cell id -> its source hunks undone so far."""
    result = Plan()
    before = {c["id"]: c for c in old}
    after = {c["id"]: c for c in new}
    now = {c["id"]: c for c in current}
    src, dst = (after, before) if undo else (before, after)  # the side left, the side restored
    _sources(result, picked, before, after, now, undone_hunks, undo)
    _outputs(result, picked, src, dst, now)
    order = [c["id"] for c in current]
    gone = _removals(result, picked, src, now, undo, order)
    _inserts(result, picked, dst, now, undo, order, old if undo else new, gone)
    _moves(result, picked, order, old if undo else new)
    return result


def _same(a: dict, b: dict) -> bool:
    return (a.get("cell_type"), _text(a.get("source"))) == (b.get("cell_type"), _text(b.get("source")))


def _sources(result: Plan, picked: dict[str, Spec], before: dict, after: dict, now: dict,
             undone_hunks: dict[str, set[int]], undo: bool) -> None:
    by_cell: dict[str, dict[int, str]] = {}
    for row_id, spec in picked.items():
        if spec.kind != "source" or spec.cell_id is None:
            continue
        cell = now.get(spec.cell_id)
        if cell is None:
            result.refused[row_id] = f"cell {spec.cell_id} is no longer in the notebook"
        elif spec.hunk is None:  # its type changed: the whole cell
            want, have = (before, after) if undo else (after, before)
            if not _same(cell, have[spec.cell_id]):
                result.refused[row_id] = f"cell {spec.cell_id} {CHANGED}"
                continue
            target = want[spec.cell_id]
            result.ops.append({"op": "edit", "cell_id": spec.cell_id, "source": _text(target.get("source")),
                               "cell_type": target["cell_type"], "token": token_of(cell)})
        else:
            by_cell.setdefault(spec.cell_id, {})[spec.hunk] = row_id
    for cell_id, rows in by_cell.items():
        cell = now[cell_id]
        old, new = _text(before[cell_id].get("source")), _text(after[cell_id].get("source"))
        current = _text(cell.get("source"))
        text, refused = revise(old, new, undone_hunks.get(cell_id, set()), set(rows), current, undo)
        for hunk in refused:
            result.refused[rows[hunk]] = f"cell {cell_id}: these lines were {CHANGED}"
        if text != current:
            result.ops.append({"op": "edit", "cell_id": cell_id, "source": text, "token": token_of(cell)})
            if cell.get("cell_type") == "code":  # an edit clears a code cell's outputs: put them back
                result.ops.append({"op": "outputs", "cell_id": cell_id, "outputs": list(cell.get("outputs") or []),
                                   "execution_count": cell.get("execution_count")})


def _outputs(result: Plan, picked: dict[str, Spec], src: dict, dst: dict, now: dict) -> None:
    for row_id, spec in picked.items():
        if spec.kind != "outputs" or spec.cell_id is None:
            continue
        cell = now.get(spec.cell_id)
        if cell is None:
            result.refused[row_id] = f"cell {spec.cell_id} is no longer in the notebook"
        elif _run_state(cell) == _run_state(dst[spec.cell_id]):
            continue  # already so
        elif _run_state(cell) != _run_state(src[spec.cell_id]):
            result.refused[row_id] = f"the outputs of cell {spec.cell_id} were {CHANGED} (it was run again)"
        else:
            target = dst[spec.cell_id]
            result.ops.append({"op": "outputs", "cell_id": spec.cell_id, "outputs": list(target.get("outputs") or []),
                               "execution_count": target.get("execution_count")})


def _removals(result: Plan, picked: dict[str, Spec], src: dict, now: dict, undo: bool, order: list[str]) -> set[str]:
    """Cells the turn added (undo) or the turn deleted (redo): removed unless changed since."""
    removed: set[str] = set()
    for row_id, spec in picked.items():
        if spec.kind != ("added" if undo else "deleted") or spec.cell_id is None:
            continue
        cell = now.get(spec.cell_id)
        if cell is None:
            continue  # already gone
        if not _same(cell, src[spec.cell_id]):
            result.refused[row_id] = f"cell {spec.cell_id} {CHANGED}"
            continue
        result.ops.append({"op": "delete", "cell_id": spec.cell_id, "token": token_of(cell)})
        order.remove(spec.cell_id)
        removed.add(spec.cell_id)
    return removed


def _inserts(result: Plan, picked: dict[str, Spec], dst: dict, now: dict, undo: bool, order: list[str],
             sequence: list[dict], gone: set[str]) -> None:
    """Cells the turn deleted (undo) or added (redo): put back after the nearest cell before them."""
    wanted = {spec.cell_id: row_id for row_id, spec in picked.items()
              if spec.kind == ("deleted" if undo else "added") and spec.cell_id is not None}
    for cell in sequence:  # in the restored side's order, so one inserted cell anchors the next
        cid = cell["id"]
        if cid not in wanted:
            continue
        if cid in now and cid not in gone:
            if not _same(now[cid], dst[cid]):
                result.refused[wanted[cid]] = f"a cell with id {cid} is in the notebook again, changed"
            continue
        anchor = _anchor(cid, sequence, order)
        result.ops.append({"op": "insert", "after_cell_id": anchor, "cell": dict(dst[cid])})
        order.insert(0 if anchor is None else order.index(anchor) + 1, cid)


def _moves(result: Plan, picked: dict[str, Spec], order: list[str], sequence: list[dict]) -> None:
    for row_id, spec in picked.items():
        if spec.kind != "moved" or spec.cell_id is None:
            continue
        cid = spec.cell_id
        if cid not in order:
            result.refused[row_id] = f"cell {cid} is no longer in the notebook"
            continue
        order.remove(cid)
        anchor = _anchor(cid, sequence, order)
        # No token: a move loses nothing, and an edit of this same plan may have changed the cell already.
        result.ops.append({"op": "move", "cell_id": cid, "after_cell_id": anchor})
        order.insert(0 if anchor is None else order.index(anchor) + 1, cid)


def _anchor(cell_id: str, sequence: list[dict], order: list[str]) -> str | None:
    """The nearest cell before ``cell_id`` in ``sequence`` that is in the notebook now (None: the top)."""
    ids = [c["id"] for c in sequence]
    for earlier in reversed(ids[:ids.index(cell_id)]):
        if earlier in order:
            return earlier
    return None
