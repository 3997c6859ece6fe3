"""Notebook documents: where the notebook tools read and write, and the cell-level edits they send.

The tools never touch a notebook's storage themselves. They read a ``Snapshot`` from a
``NotebookStore`` and send it a list of edit operations (plain JSON dicts, so they can cross a
process boundary). The store applies all of them or none:

- the file itself (nbagent.tools.nbfile, the fallback everywhere: nbagent.tools.nbstores adds it);
- a Jupyter server's live shared document or open view (registered by nbagent's server extension
  in the server process, or reached over HTTP from a kernel the server started).

Conflicts are found per cell: a cell's token is a hash of its type and source when the model read
it, and an operation on that cell carries the token; the store compares it with the cell as it is
right before the write and refuses with "read again" when they differ. A range edit (``old_text``)
carries no token: it replaces only its range, so text typed meanwhile elsewhere in the cell stays.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import ToolError
from ..render.escape import first_of
from .nbshrink import as_text

ID_PATTERN = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")  # nbformat 4.5's schema for cell ids
CELL_TYPES = ("code", "markdown", "raw")


class StaleCell(ToolError):
    """The cell changed since the model read it: nothing was written."""


def cell_token(cell_type: str, source: Any) -> str:
    """The version of one cell as the model saw it: its type and source, hashed."""
    return hashlib.sha256(f"{cell_type}\0{as_text(source)}".encode()).hexdigest()[:10]


def token_of(cell: Any) -> str:
    return cell_token(cell.get("cell_type", ""), cell.get("source", ""))


@dataclass
class Snapshot:
    """A notebook as one store holds it now (``notebook`` is nbformat 4 JSON with cell ids)."""

    notebook: dict
    where: str = "file"
    """"file", "live document" (collaboration room) or "open view" (a JupyterLab tab)."""
    exists: bool = True
    source_format: str = "4.5"
    legacy_ids: bool = False
    """True when the stored format (before 4.5) keeps no cell ids: the ids shown are made up."""
    ids_assigned: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict) -> "Snapshot":
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


class NotebookStore(Protocol):
    """Where notebooks are read and changed. ``None`` from a method means "not mine: ask the next"."""

    def read(self, path: Path, name: str, *, allow_missing: bool = False) -> Snapshot | None: ...

    def apply(self, path: Path, name: str, ops: list[dict], *, allow_missing: bool = False) -> Snapshot | None: ...


@dataclass
class _Registry:
    stores: list[Any] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


_REGISTRY = _Registry()


def register_store(store: NotebookStore) -> None:
    """Put ``store`` before the file for every agent of this process (the server extension does)."""
    with _REGISTRY.lock:
        _REGISTRY.stores.insert(0, store)


def unregister_store(store: NotebookStore) -> None:
    with _REGISTRY.lock:
        _REGISTRY.stores = [s for s in _REGISTRY.stores if s is not store]


def registered_stores(ctx: Any = None) -> list[Any]:
    """The stores before the file, in order: a context's own first, then those registered for the process."""
    own = (ctx.extras.get("notebook_stores") or []) if ctx is not None else []
    with _REGISTRY.lock:
        registered = list(_REGISTRY.stores)
    return [*own, *registered]


# ----- operations on a notebook held as plain JSON (what the file and the open view use) ---------

def find(cells: list, cell_id: str, name: str) -> int:
    for index, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return index
    ids = [c.get("id") for c in cells]
    listed = first_of([str(i) for i in ids], 30) if ids else "none: the notebook is empty"
    raise ToolError(f"no cell with id {cell_id!r} in {name}; its cell ids are: {listed}. "
                    "Ids come from notebook_read; they are not positions.")


def check_token(cell: Any, op: dict, name: str) -> None:
    """Refuse when the cell is not what the model read (the store calls this right before writing)."""
    expected = op.get("token")
    if expected is None:
        return
    if token_of(cell) != expected:
        raise StaleCell(f"cell {op['cell_id']} of {name} changed since you read it (someone typed in it "
                        "or ran an edit); nothing was written. Read it again with notebook_read and redo "
                        "the change on what is there now.")


def range_source(current: str, old_text: str, new_text: str, cell_id: str) -> tuple[int, int, str]:
    """Where ``old_text`` is in ``current`` (exactly once) -> (start, end, the whole new source)."""
    if not old_text:
        raise ToolError("old_text must not be empty: give the exact text to replace")
    count = current.count(old_text)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise StaleCell(f"old_text {where} in cell {cell_id} as it is now; nothing was written. Read the cell "
                        "again and give a longer, unique old_text.")
    start = current.index(old_text)
    return start, start + len(old_text), current[:start] + new_text + current[start + len(old_text):]


def new_cell(cell_type: str, source: str, cell_id: str, like: dict | None = None) -> dict:
    """An nbformat 4.5 cell as plain JSON; ``like`` passes on metadata and (non-code) attachments."""
    if cell_type not in CELL_TYPES:
        raise ToolError(f"cell_type must be one of {', '.join(CELL_TYPES)}, not {cell_type!r}")
    cell: dict = {"id": cell_id, "cell_type": cell_type, "metadata": dict((like or {}).get("metadata") or {}),
                  "source": source}
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    elif like is not None and "attachments" in like:
        cell["attachments"] = like["attachments"]
    return cell


def apply_ops(nb: dict, ops: list[dict], name: str) -> None:
    """Apply ``ops`` in place to a notebook held as JSON (tokens are checked cell by cell)."""
    for op in ops:
        kind = op.get("op")
        cells = nb["cells"]
        if kind == "insert":
            index = 0 if op.get("after_cell_id") is None else find(cells, op["after_cell_id"], name) + 1
            if any(c.get("id") == op["cell"]["id"] for c in cells):
                raise ToolError(f"a cell with id {op['cell']['id']} is already in {name}")
            cells.insert(index, dict(op["cell"]))
            continue
        index = find(cells, op["cell_id"], name)
        cell = cells[index]
        check_token(cell, op, name)
        if kind == "edit":
            _edit(cells, index, op, name)
        elif kind == "delete":
            del cells[index]
        elif kind == "move":
            moved = cells.pop(index)
            target = 0 if op.get("after_cell_id") is None else find(cells, op["after_cell_id"], name) + 1
            cells.insert(target, moved)
        elif kind == "outputs":
            cell["outputs"] = list(op["outputs"])
            cell["execution_count"] = op.get("execution_count")
        else:
            raise ToolError(f"unknown notebook operation {kind!r}")


def _edit(cells: list, index: int, op: dict, name: str) -> None:
    cell = cells[index]
    source = op["source"]
    if op.get("old_text") is not None:
        source = range_source(as_text(cell.get("source", "")), op["old_text"], op["source"], op["cell_id"])[2]
    new_type = op.get("cell_type") or cell["cell_type"]
    if new_type != cell["cell_type"]:
        cell = cells[index] = new_cell(new_type, source, cell["id"], like=cell)
    cell["source"] = source
    if new_type == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
