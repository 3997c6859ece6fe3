"""Restoring a notebook that is open in a Jupyter server: through its live document, cell by cell.

When a notebook store other than the file holds the notebook (the server's live document or open
view, nbagent.tools.nbdoc), undo and redo send it the same cell operations the agent's notebook
edits use, so the open notebook updates at once and no save conflict loses anything. Only what the
turn changed is put back (cells keep their ids; what was typed or run since in other cells stays);
a notebook no live store holds is restored as a file, byte for byte.

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
from typing import Any

from ..errors import ToolError
from ..workspace.safe_read import read_bytes
from .gitrepo import CheckpointError
from ..tools.nbdoc import token_of

SETTLE_TIMEOUT = 10.0
"""Seconds to wait for an open notebook's room to save it (jupyter-collaboration's delay is 1 s)."""
_POLL = 0.02
"""Seconds between looks at the file while a room saves: 50 ms cost a partial undo 28 ms of its 213 to
the file (bench/review.py); each look reads the file and the live document, a few ms for 200 cells."""


def restore_live(stores: list[Any], path: Path, name: str, data: bytes, exists: bool = True,
                 base: bytes | None = None) -> bool:
    """Make the open notebook's cells those of ``data``; False when no live store holds it.

    ``base`` is the notebook as the turn left it: only what the turn changed is put back (see
    cell_ops). Returns once the file holds what the open notebook now holds (or after
    SETTLE_TIMEOUT), so the next snapshot, undo or redo sees it. A notebook whose file is gone
    (``exists`` False) is written as a file: a tab that still shows it keeps what it shows, and a
    collaboration room reloads the file that is back.
    """
    cells = _cells(data)
    if not exists or cells is None or not all(isinstance(c, dict) and c.get("id") for c in cells):
        return False  # cells without ids cannot be matched: the file path restores them exactly
    try:  # a cell the turn changed was changed since, or the tab holding it did not answer
        store, snap = _live(stores, path, name)
        if store is None or snap is None:
            return False
        left = _cells(base) if base is not None else None
        store.apply(path, name, cell_ops(snap.notebook["cells"], cells, left))
        settle(stores, path, name)
    except ToolError as exc:
        raise CheckpointError(f"cannot restore {name}, open in JupyterLab: {exc}") from None
    return True


def settle(stores: list[Any], path: Path, name: str, timeout: float = SETTLE_TIMEOUT, outputs: bool = False) -> None:
    """Wait until an open notebook's file holds the cells its live store holds (no store: at once).

    The room saves on the server's loop: no event reaches this process, so the file is polled. With
    ``outputs`` (a turn's snapshots: a notebook_run or the user's run changes only outputs and
    execution counts) those are waited for too: a collaboration room saves them by itself, an open
    view without collaboration only when the tab is saved, so the tab is asked to save first."""
    if outputs:
        _save_open_view(stores, path, name)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, snap = _live(stores, path, name)
        if snap is None or _file_holds(path, snap.notebook["cells"], outputs):
            return
        time.sleep(_POLL)


def _save_open_view(stores: list[Any], path: Path, name: str) -> None:
    """Ask the stores that can (the server's) to save the tab holding the notebook; each answers None
    when no tab holds it without collaboration."""
    for store in stores:
        save = getattr(store, "save", None)
        if callable(save) and save(path, name) is not None:
            return


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


def _file_holds(path: Path, cells: list[dict], outputs: bool = False) -> bool:
    try:
        on_disk = _cells(read_bytes(path)[0])
    except OSError:
        return False
    if on_disk is None or _comparable(on_disk) != _comparable(cells):
        return False
    return not outputs or _run_states(on_disk) == _run_states(cells)


def _run_states(cells: list[Any]) -> list[Any]:
    return [_run_state(c) if isinstance(c, dict) and c.get("cell_type") == "code" else None for c in cells]


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

    With ``base`` (the cells as the turn left them) only what the turn changed is put back: a cell
    added since stays, a cell the turn did not change keeps what was typed in it since, outputs come
    back only where nobody ran the cell since (the ``%agent`` cell keeps its view), and a cell the
    turn changed that was changed since is refused (the store checks its token). A cell already in
    its place is not moved (a live document moves by delete and insert, which would disturb a cell
    someone is typing in or running).
    """
    wanted = {c["id"] for c in target}
    left = {c.get("id"): c for c in base} if base is not None else None
    ops: list[dict] = []
    for cell in current:
        if cell.get("id") in wanted:
            continue
        if left is None:
            ops.append({"op": "delete", "cell_id": cell["id"], "token": token_of(cell)})
        elif cell.get("id") in left:  # the turn's cell: gone unless someone changed it since
            ops.append({"op": "delete", "cell_id": cell["id"], "token": token_of(left[cell["id"]])})
    deleted = {op["cell_id"] for op in ops}
    present = {c["id"]: c for c in current if c.get("id") in wanted}
    order = [c.get("id") for c in current if c.get("id") not in deleted]
    previous: str | None = None
    for cell in target:
        here = present.get(cell["id"])
        at = 0 if previous is None else order.index(previous) + 1
        if here is None:
            ops.append({"op": "insert", "after_cell_id": previous, "cell": dict(cell)})
            order.insert(at, cell["id"])
        else:
            ops += _edits(here, cell, None if left is None else left.get(cell["id"]), left is not None)
            if at >= len(order) or order[at] != cell["id"]:
                ops.append({"op": "move", "cell_id": cell["id"], "after_cell_id": previous})
                order.remove(cell["id"])
                order.insert(0 if previous is None else order.index(previous) + 1, cell["id"])
        previous = cell["id"]
    return ops


def _edits(here: dict, cell: dict, turns: dict | None, three_way: bool) -> list[dict]:
    """A cell's edit and outputs operations; ``turns``: the cell as the turn left it."""
    ops: list[dict] = []
    differs = _content(here) != _content(cell)
    changed_by_turn = turns is None or _content(turns) != _content(cell)
    edit = differs and (changed_by_turn or not three_way)
    if edit:
        basis = turns if three_way and turns is not None else here
        ops.append({"op": "edit", "cell_id": cell["id"], "source": _text(cell.get("source")),
                    "cell_type": cell["cell_type"], "token": token_of(basis)})
    if cell["cell_type"] == "code" and (edit or _run_state(here) != _run_state(cell)):
        if edit or turns is None or _run_state(here) == _run_state(turns):
            ops.append({"op": "outputs", "cell_id": cell["id"], "outputs": list(cell.get("outputs") or []),
                        "execution_count": cell.get("execution_count")})
    return ops


def _content(cell: dict) -> tuple[Any, str]:
    return cell.get("cell_type"), _text(cell.get("source"))


def _run_state(cell: dict) -> tuple[str, Any]:
    return json.dumps([_output(o) for o in cell.get("outputs") or []], sort_keys=True), cell.get("execution_count")


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else (source or "")
