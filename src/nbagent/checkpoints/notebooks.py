"""Restoring a notebook that is open in a Jupyter server: through its live document, cell by cell.

When a notebook store other than the file holds the notebook (the server's live document or open
view, nbagent.tools.nbdoc), undo and redo send it the same cell operations the agent's notebook
edits use, so the open notebook updates at once and no save conflict loses anything. The cells
come back with their ids, types and sources, and with their outputs where nobody ran them since; a
notebook no live store holds is restored as a file, byte for byte.

A live document reaches the file a moment later (the collaboration room saves it after a short
delay), so whoever snapshots the workspace next waits for that save first (``settle``), and a
notebook counts as unchanged when its cells' ids, types and sources are the checkpoint's
(``same_notebook``): the room writes the same cells in its own formatting, and running a cell
changes only outputs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

from ..errors import ToolError
from ..tools.nbdoc import token_of

StoresFn = Callable[[], list[Any]]
SETTLE_TIMEOUT = 10.0
"""Seconds to wait for an open notebook's room to save it (jupyter-collaboration's delay is 1 s)."""
_POLL = 0.02


def restore_live(stores: list[Any], path: Path, name: str, data: bytes, exists: bool = True,
                 base: bytes | None = None) -> bool:
    """Make the open notebook's cells those of ``data``; False when no live store holds it.

    Returns once the file holds the restored cells too (or after SETTLE_TIMEOUT), so the next
    snapshot, undo or redo sees them. ``base`` is the notebook as the turn left it (see cell_ops).
    A notebook whose file is gone (``exists`` False) is left to
    the file when a collaboration room holds it: a room cannot save a file that is gone, and it
    reloads one that comes back. A JupyterLab tab without collaboration saves it, so it takes it.
    """
    cells = _cells(data)
    if cells is None or not all(isinstance(c, dict) and c.get("id") for c in cells):
        return False  # cells without ids cannot be matched: the file path restores them exactly
    for attempt in range(3):
        store, snap = _live(stores, path, name)
        if store is None or snap is None or (not exists and snap.where == "live document"):
            return False
        try:
            left = _cells(base) if base is not None else None
            store.apply(path, name, cell_ops(snap.notebook["cells"], cells, left))
            break
        except ToolError:
            if attempt == 2:  # someone keeps typing in it: say so rather than overwrite their cell
                raise
    _wait_for_file(path, cells, SETTLE_TIMEOUT)
    return True


def settle(stores: list[Any], path: Path, name: str, timeout: float = SETTLE_TIMEOUT) -> None:
    """Wait until an open notebook's file holds the cells its live store holds (no store: at once)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, snap = _live(stores, path, name)
        if snap is None or _file_holds(path, snap.notebook["cells"]):
            return
        time.sleep(_POLL)


def same_notebook(a: bytes, b: bytes) -> bool:
    """Whether two notebook files hold the same cells (ids, types, sources), however written."""
    cells_a, cells_b = _cells(a), _cells(b)
    return cells_a is not None and cells_b is not None and _comparable(cells_a) == _comparable(cells_b)


def _live(stores: list[Any], path: Path, name: str) -> tuple[Any, Any]:
    """The first store other than the file that holds ``path`` open, with its snapshot."""
    from ..tools.nbfile import FILE_STORE

    for store in stores:
        if store is FILE_STORE:
            continue
        snap = store.read(path, name, allow_missing=True)
        if snap is not None and snap.where != "file":
            return store, snap
    return None, None


def _wait_for_file(path: Path, cells: list[dict], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not _file_holds(path, cells) and time.monotonic() < deadline:
        time.sleep(_POLL)  # the room saves on its own loop: there is no event to wait on from here


def _file_holds(path: Path, cells: list[dict]) -> bool:
    try:
        on_disk = _cells(path.read_bytes())
    except OSError:
        return False
    return on_disk is not None and _comparable(on_disk) == _comparable(cells)


def _cells(data: bytes) -> list[dict] | None:
    try:
        cells = json.loads(data.decode("utf-8"))["cells"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    return cells if isinstance(cells, list) else None


def _comparable(cells: list[Any]) -> list[tuple]:
    """What counts as a change to a notebook: its cells' ids, types and sources. Outputs and
    execution counts change whenever someone runs a cell (the ``%agent`` cell itself, while its turn
    ends); they are not someone else's edit to refuse an undo over."""
    return [(c.get("id"), c.get("cell_type"), _text(c.get("source"))) if isinstance(c, dict) else (None,)
            for c in cells]


def _output(output: Any) -> Any:
    """An output with its multi-line strings joined (nbformat writes them as lists of lines)."""
    if not isinstance(output, dict):
        return output
    joined = {k: _text(v) if k == "text" else v for k, v in output.items()}
    if isinstance(output.get("data"), dict):
        joined["data"] = {mime: _text(v) if isinstance(v, list) and all(isinstance(x, str) for x in v) else v
                          for mime, v in output["data"].items()}
    return joined


def cell_ops(current: list[dict], target: list[dict], base: list[dict] | None = None) -> list[dict]:
    """The notebook operations (nbdoc.apply_ops) that turn ``current`` cells into ``target`` ones.

    A cell already in its place is not moved (a live document moves by delete and insert, which
    would disturb a cell someone is typing in or running). With ``base`` (the cells as the turn left
    them), outputs are restored only where the turn changed them and nobody has since: a cell run
    after the turn keeps its new outputs, and the ``%agent`` cell that ran the turn keeps its view.
    """
    wanted = {c["id"] for c in target}
    ops: list[dict] = [{"op": "delete", "cell_id": c["id"], "token": token_of(c)}
                       for c in current if c.get("id") not in wanted]
    present = {c["id"]: c for c in current if c.get("id") in wanted}
    before = {c.get("id"): c for c in base} if base is not None else None
    order = [c["id"] for c in current if c.get("id") in wanted]
    previous: str | None = None
    for cell in target:
        here = present.get(cell["id"])
        at = 0 if previous is None else order.index(previous) + 1
        if here is None:
            ops.append({"op": "insert", "after_cell_id": previous, "cell": dict(cell)})
            order.insert(at, cell["id"])
        else:
            ops += _edits(here, cell, None if before is None else before.get(cell["id"]))
            if at >= len(order) or order[at] != cell["id"]:
                ops.append({"op": "move", "cell_id": cell["id"], "after_cell_id": previous})
                order.remove(cell["id"])
                order.insert(0 if previous is None else order.index(previous) + 1, cell["id"])
        previous = cell["id"]
    return ops


def _edits(here: dict, cell: dict, left: dict | None) -> list[dict]:
    ops: list[dict] = []
    changed = (here.get("cell_type"), _text(here.get("source"))) != (cell["cell_type"], _text(cell.get("source")))
    if changed:
        ops.append({"op": "edit", "cell_id": cell["id"], "source": _text(cell.get("source")),
                    "cell_type": cell["cell_type"], "token": token_of(here)})
    if cell["cell_type"] == "code" and (changed or _run_state(here) != _run_state(cell)):
        if changed or left is None or _run_state(here) == _run_state(left):
            ops.append({"op": "outputs", "cell_id": cell["id"], "outputs": list(cell.get("outputs") or []),
                        "execution_count": cell.get("execution_count")})
    return ops


def _run_state(cell: dict) -> tuple[str, Any]:
    return json.dumps([_output(o) for o in cell.get("outputs") or []], sort_keys=True), cell.get("execution_count")


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else (source or "")
