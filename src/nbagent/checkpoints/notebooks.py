"""Restoring a notebook that is open in a Jupyter server: through its live document, cell by cell.

When a notebook store other than the file holds the notebook (the server's live document or open
view, nbagent.tools.nbdoc), undo and redo send it the same cell operations the agent's notebook
edits use, so the open notebook updates at once and no save conflict loses anything. The cells
come back with their ids, types, sources and outputs; a notebook no live store holds is restored as
a file, byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ..tools.nbdoc import token_of

StoresFn = Callable[[], list[Any]]


def restore_live(stores: list[Any], path: Path, name: str, data: bytes) -> bool:
    """Make the open notebook's cells those of ``data``; False when no live store holds it."""
    try:
        target = json.loads(data.decode("utf-8"))
        cells = target["cells"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return False
    if not all(isinstance(c, dict) and c.get("id") for c in cells):
        return False  # cells without ids cannot be matched: the file path restores them exactly
    from ..tools.nbfile import FILE_STORE

    for store in stores:
        if store is FILE_STORE:
            continue
        snap = store.read(path, name)
        if snap is None or snap.where == "file":
            continue
        store.apply(path, name, cell_ops(snap.notebook["cells"], cells))
        return True
    return False


def cell_ops(current: list[dict], target: list[dict]) -> list[dict]:
    """The notebook operations (nbdoc.apply_ops) that turn ``current`` cells into ``target`` ones."""
    wanted = {c["id"] for c in target}
    ops: list[dict] = [{"op": "delete", "cell_id": c["id"], "token": token_of(c)}
                       for c in current if c.get("id") not in wanted]
    present = {c["id"]: c for c in current if c.get("id") in wanted}
    previous: str | None = None
    for cell in target:
        here = present.get(cell["id"])
        if here is None:
            ops.append({"op": "insert", "after_cell_id": previous, "cell": dict(cell)})
        else:
            ops += _edits(here, cell)
            ops.append({"op": "move", "cell_id": cell["id"], "after_cell_id": previous})
        previous = cell["id"]
    return ops


def _edits(here: dict, cell: dict) -> list[dict]:
    ops: list[dict] = []
    changed = (here.get("cell_type"), _text(here.get("source"))) != (cell["cell_type"], _text(cell.get("source")))
    if changed:
        ops.append({"op": "edit", "cell_id": cell["id"], "source": _text(cell.get("source")),
                    "cell_type": cell["cell_type"], "token": token_of(here)})
    if cell["cell_type"] == "code" and (changed or here.get("outputs") != cell.get("outputs")
                                        or here.get("execution_count") != cell.get("execution_count")):
        ops.append({"op": "outputs", "cell_id": cell["id"], "outputs": list(cell.get("outputs") or []),
                    "execution_count": cell.get("execution_count")})
    return ops


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else (source or "")
