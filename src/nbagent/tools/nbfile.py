"""The notebook file as a notebook store: nbformat reads, cell-level edits, atomic writes.

This is where the notebook tools read and write when no Jupyter server holds the notebook open (a
terminal, nbconvert, a closed notebook). A change
- loads the file, checks each touched cell's token, applies the operations, validates with nbformat
  and replaces the file atomically, all under one lock in this process; a save by another process
  in the meantime is caught by the content hash just before the replace;
- keeps the file's mode; a failure leaves the old file whole.

Notebooks saved before nbformat 4.5 have no cell ids. Reading them shows ids derived from each
cell's position and source (stable while the file is unchanged); the first change upgrades the file
to 4.5 with nbformat's own upgrade and stores exactly those ids.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..workspace.atomic import atomic_write
from .nbshrink import as_text
from .nbdoc import ID_PATTERN, Snapshot, apply_ops
from .textfile import read_regular_bytes

# One writer at a time in this process: the token checks and the replace happen as one step for
# every agent in the kernel or server. Other processes are caught by the hash check before replace.
_WRITE_LOCK = threading.Lock()


def _nbformat():
    """nbformat, imported on first use: it imports traitlets, which importing the core must not
    (tests/architecture/test_import_boundary.py); it also keeps ~0.1 s of imports off the agent's start."""
    import nbformat
    import nbformat.reader

    return nbformat


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


class FileStore:
    """Reads and changes the .ipynb file itself; answers for every path (the last store asked)."""

    def read(self, path: Path, name: str, *, allow_missing: bool = False) -> Snapshot:
        return load(path, name, allow_missing=allow_missing)[0]

    def apply(self, path: Path, name: str, ops: list[dict], *, allow_missing: bool = False) -> Snapshot:
        with _WRITE_LOCK:
            snap, raw_digest = load(path, name, allow_missing=allow_missing)
            apply_ops(snap.notebook, ops, name)
            save(path, name, snap.notebook, raw_digest)
        return Snapshot(snap.notebook, "file", True, "4.5")


FILE_STORE = FileStore()


def load(path: Path, name: str, *, allow_missing: bool = False) -> tuple[Snapshot, str]:
    """The notebook on disk and the hash of its bytes ("absent" for a new notebook, if allowed)."""
    if path.is_dir():
        raise ToolError(f"{name} is a directory, not a notebook")
    try:
        raw = read_regular_bytes(path, name)[0]  # a FIFO would block the read forever
    except FileNotFoundError:
        if allow_missing:
            return new_notebook(path, name), "absent"
        raise ToolError(f"{name}: no such notebook (notebook_insert without after_cell_id creates one)") from None
    return parse(raw, name), digest(raw)


def parse(raw: bytes, name: str) -> Snapshot:
    """nbformat's reader without its validation pass, which would give missing ids random values."""
    nbformat = _nbformat()
    try:
        nb = _read_node(raw.decode("utf-8"))
        major, minor = int(nb.nbformat), int(nb.get("nbformat_minor", 0))
        stored_ids = (major, minor) >= (4, 5)
        if major < 4:
            nb = nbformat.convert(nb, 4)
        elif not stored_ids:
            nbformat.v4.upgrade(nb)
    except Exception as exc:  # NotJSONError, UnicodeDecodeError, a missing key: all say "not a notebook"
        raise ToolError(f"{name} is not a readable notebook ({type(exc).__name__}: {str(exc)[:200]}); "
                        "use the file tools for other files") from None
    assigned = fill_ids(nb.cells, keep_stored=stored_ids)
    return Snapshot(nb, "file", True, f"{major}.{minor}", not stored_ids, assigned)


def _read_node(text: str) -> Any:
    """nbformat.reader.reads, joining stream outputs' line lists first.

    nbformat turns every list item into a node one by one; for a 200,000-line output that is most
    of a read's time (0.5 s of 0.8 s), and a joined string is one item.
    """
    nbformat = _nbformat()
    data = nbformat.reader.parse_json(text)
    for cell in data.get("cells") or ():
        for output in cell.get("outputs") or () if isinstance(cell, dict) else ():
            if isinstance(output, dict) and isinstance(output.get("text"), list):
                output["text"] = "".join(output["text"])
    major, minor = nbformat.reader.get_version(data)
    if major != 4:
        return nbformat.versions[major].to_notebook_json(data, minor=minor)
    return _v4_node(nbformat, data)


def _v4_node(nbformat: Any, data: dict) -> Any:
    """nbformat 4's reader step by step, tolerating what real files hold: a cell without ``source``
    (a 4.99 "future" cell), metadata or attachments of an unexpected type. Nothing is repaired:
    validation judges the file when a change is saved."""
    nb = nbformat.from_dict(data)
    if isinstance(nb.get("metadata"), dict):
        for key in ("orig_nbformat", "orig_nbformat_minor", "signature"):
            nb.metadata.pop(key, None)
    for cell in nb.get("cells") or ():
        if not isinstance(cell, dict):
            continue
        source = cell.get("source")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            cell["source"] = "".join(source)
        if isinstance(cell.get("metadata"), dict):
            cell["metadata"].pop("trusted", None)
        _rejoin_bundles(cell)
    return nb


def _rejoin_bundles(cell: dict) -> None:
    """Join the line lists of a cell's attachments and rich outputs, skipping anything malformed."""
    attachments = cell.get("attachments")
    bundles = list(attachments.values()) if isinstance(attachments, dict) else []
    for output in cell.get("outputs") or () if cell.get("cell_type") == "code" else ():
        if isinstance(output, dict) and isinstance(output.get("data"), dict):
            bundles.append(output["data"])
    for bundle in bundles:
        if not isinstance(bundle, dict):
            continue
        for mime, value in bundle.items():
            is_json = mime == "application/json" or (mime.startswith("application/") and mime.endswith("+json"))
            if not is_json and isinstance(value, list) and all(isinstance(v, str) for v in value):
                bundle[mime] = "".join(value)


def new_notebook(path: Path, name: str) -> Snapshot:
    if path.suffix != ".ipynb":
        raise ToolError(f"{name}: a new notebook's name must end in .ipynb")
    nb = _nbformat().v4.new_notebook(metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    return Snapshot(nb, "file", False, "new")


def fill_ids(cells: list, *, keep_stored: bool) -> int:
    """Give every cell a valid, unique id; ids derive from position and source, so each read agrees."""
    stored = [c.get("id") if keep_stored else None for c in cells]
    taken = {i for i in stored if isinstance(i, str) and ID_PATTERN.match(i)}
    seen: set[str] = set()
    assigned = 0
    for index, (cell, cell_id) in enumerate(zip(cells, stored)):
        if not (isinstance(cell_id, str) and ID_PATTERN.match(cell_id)) or cell_id in seen:
            cell_id = stable_id(index, as_text(cell.get("source", "")), taken | seen)
            cell["id"] = cell_id
            assigned += 1
        seen.add(cell_id)
    return assigned


def stable_id(index: int, source: str, taken: set[str]) -> str:
    salt = 0
    while True:
        cell_id = hashlib.sha1(f"{index}\0{salt}\0{source}".encode()).hexdigest()[:8]
        if cell_id not in taken:
            return cell_id
        salt += 1


def _valid_on_disk(path: Path, name: str) -> bool:
    """Whether the file as it is now passes nbformat's validation (unreadable counts as invalid)."""
    nbformat = _nbformat()
    try:
        nbformat.validate(nbformat.reads(read_regular_bytes(path, name)[0].decode("utf-8"), nbformat.NO_CONVERT))
        return True
    except Exception:  # ValidationError, NotJSONError, a decode error: all mean "not valid before"
        return False


def save(path: Path, name: str, nb: Any, raw_digest: str) -> None:
    """Validate, then replace the file atomically if it still holds what was loaded."""
    nbformat = _nbformat()
    node = nbformat.from_dict(nb)
    node["nbformat"], node["nbformat_minor"] = 4, max(5, int(node.get("nbformat_minor", 0)))
    try:
        nbformat.validate(node)
    except nbformat.ValidationError as exc:
        problem = str(exc).strip().splitlines()[0][:300]
        if path.exists() and not _valid_on_disk(path, name):
            raise ToolError(f"{name} was already invalid before this change ({problem}); nothing was written. "
                            "Fix the file first (JupyterLab or nbformat can tell what is wrong), then retry.") from None
        raise ToolError(f"the change would leave {name} invalid ({problem}); nothing was written") from None
    text = nbformat.versions[4].writes_json(node)  # nbformat.writes would validate a second time
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
    on_disk = read_regular_bytes(path, name)[0] if path.exists() else None
    if (digest(on_disk) if on_disk is not None else "absent") != raw_digest:
        raise ToolError(f"{name} changed on disk while the change was being made; nothing was written. "
                        "Read it again with notebook_read.")
    atomic_write(path, data, mode=None if path.exists() else 0o644)


