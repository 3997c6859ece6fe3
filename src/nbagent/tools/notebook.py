"""Notebook tools: read and change .ipynb cells by id through nbformat, without losing anyone's work.

Cells are addressed by their nbformat cell id, never by position, so an id the model read stays
right when cells move. Every change
- starts from the version (mtime_ns + content hash) the model last read, and is refused when the
  file changed since: a save from JupyterLab or another agent is never overwritten;
- is validated with nbformat and written atomically (a temporary file, then os.replace), so a
  failure leaves the old file whole;
- clears the outputs of an edited code cell: they belonged to the old source.

Notebooks saved before nbformat 4.5 have no cell ids. Reading them shows ids derived from each
cell's position and source (stable while the file is unchanged); the first change upgrades the
file to 4.5 with nbformat's own upgrade and stores exactly those ids.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from ..atomic import atomic_write
from ..errors import ToolError
from .nbshrink import OutputBudget, as_text, describe_image, elide_data_uris, output_kind, widget_models
from .base import ToolSet, function_tool

VERSIONS_KEY = "notebook_versions"
"""ctx.extras[VERSIONS_KEY]: resolved path -> the version this agent last read or wrote."""

CellType = Literal["code", "markdown", "raw"]
_ID_PATTERN = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")  # nbformat 4.5's schema for cell ids
_VERSION_PATTERN = re.compile(r"^\d+-[0-9a-f]{16}$")
# One writer at a time in this process: the version check and the replace then happen as one step
# for every agent in the kernel or server. Other processes are caught by the hash check before replace.
_WRITE_LOCK = threading.Lock()


@dataclass
class Notebook:
    """A notebook as loaded: the node, where it came from, and what had to be filled in."""

    path: Path
    name: str
    nb: Any
    digest: str
    """sha256 prefix of the bytes on disk ("absent" for a notebook about to be created)."""
    version: str
    ids_assigned: int
    source_format: str
    legacy_ids: bool = False
    """True when the file's format (before 4.5) stores no cell ids at all."""

    @property
    def cells(self) -> list:
        return self.nb.cells


@dataclass
class Change:
    """What one edit tool did to one cell, for the approval diff and the model's result."""

    verb: str
    cell_id: str
    before: str
    after: str
    old_pos: int | None
    new_pos: int | None
    old_type: str
    new_type: str
    note: str = ""


# ----- loading, versions, saving ------------------------------------------------------------------

def _nbformat():
    """nbformat, imported on first use: it imports traitlets, which importing the core must not
    (tests/engine/test_import_boundary.py); it also keeps ~0.1 s of imports off the agent's start."""
    import nbformat
    import nbformat.corpus.words
    import nbformat.reader

    return nbformat


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


def load(ctx, path: str, *, write: bool, allow_missing: bool = False) -> Notebook:
    """Read and parse a notebook inside the workspace; a missing one is an empty new notebook if allowed."""
    target = ctx.workspace.resolve(path, write=write)
    name = ctx.workspace.rel(target)
    if target.is_dir():
        raise ToolError(f"{name} is a directory, not a notebook")
    try:
        raw = target.read_bytes()
        mtime = target.stat().st_mtime_ns
    except FileNotFoundError:
        if allow_missing:
            return _new_notebook(target, name)
        raise ToolError(f"{name}: no such notebook (notebook_insert without after_cell_id creates one)") from None
    return parse(target, name, raw, mtime)


def parse(target: Path, name: str, raw: bytes, mtime_ns: int) -> Notebook:
    """nbformat's reader without its validation pass, which would give missing ids random values."""
    nbformat = _nbformat()
    try:
        nb = _read_node(raw.decode("utf-8"))
        major, minor = int(nb.nbformat), int(nb.get("nbformat_minor", 0))
        source_format = f"{major}.{minor}"
        stored_ids = (major, minor) >= (4, 5)
        if major < 4:
            nb = nbformat.convert(nb, 4)
        elif not stored_ids:
            nbformat.v4.upgrade(nb)
    except Exception as exc:  # NotJSONError, UnicodeDecodeError, a missing key: all say "not a notebook"
        raise ToolError(f"{name} is not a readable notebook ({type(exc).__name__}: {str(exc)[:200]}); "
                        "use the file tools for other files") from None
    assigned = _fill_ids(nb.cells, keep_stored=stored_ids)
    digest = _digest(raw)
    return Notebook(target, name, nb, digest, f"{mtime_ns}-{digest}", assigned, source_format,
                    legacy_ids=not stored_ids)


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
    return nbformat.versions[major].to_notebook_json(data, minor=minor)


def _new_notebook(target: Path, name: str) -> Notebook:
    if target.suffix != ".ipynb":
        raise ToolError(f"{name}: a new notebook's name must end in .ipynb")
    nb = _nbformat().v4.new_notebook(metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    return Notebook(target, name, nb, "absent", "new", 0, "new")


def _fill_ids(cells: list, *, keep_stored: bool) -> int:
    """Give every cell a valid, unique id; ids derive from position and source, so each read agrees."""
    stored = [c.get("id") if keep_stored else None for c in cells]
    taken = {i for i in stored if isinstance(i, str) and _ID_PATTERN.match(i)}
    seen: set[str] = set()
    assigned = 0
    for index, (cell, cell_id) in enumerate(zip(cells, stored)):
        if not (isinstance(cell_id, str) and _ID_PATTERN.match(cell_id)) or cell_id in seen:
            cell_id = _stable_id(index, as_text(cell.get("source", "")), taken | seen)
            cell["id"] = cell_id
            assigned += 1
        seen.add(cell_id)
    return assigned


def _stable_id(index: int, source: str, taken: set[str]) -> str:
    salt = 0
    while True:
        cell_id = hashlib.sha1(f"{index}\0{salt}\0{source}".encode()).hexdigest()[:8]
        if cell_id not in taken:
            return cell_id
        salt += 1


def _versions(ctx) -> dict[str, str]:
    return ctx.extras.setdefault(VERSIONS_KEY, {})


def _check_version(ctx, nbk: Notebook, version: str | None) -> None:
    """Refuse a change unless the file on disk is the one the model read (by content hash)."""
    if nbk.digest == "absent":
        return  # nothing on disk to lose; _save refuses if a file appears meanwhile
    expected = version or _versions(ctx).get(str(nbk.path))
    if expected is None:
        raise ToolError(f"read {nbk.name} with notebook_read first: changes start from the version you read")
    if not _VERSION_PATTERN.match(expected):
        raise ToolError(f"version {expected!r} is not one notebook_read reported (they look like "
                        f"{nbk.version}); omit it to use the version you last read")
    if expected.rpartition("-")[2] != nbk.digest:
        raise ToolError(f"{nbk.name} changed since version {expected} was read (it is now {nbk.version}); "
                        "nothing was written. Read it again with notebook_read and redo the change on what "
                        "is there now.")


def _save(nbk: Notebook) -> str:
    """Validate, then replace the file atomically if it still holds what was read; returns the new version."""
    nbformat = _nbformat()
    try:
        nbformat.validate(nbk.nb)
    except nbformat.ValidationError as exc:
        problem = str(exc).strip().splitlines()[0][:300]
        raise ToolError(f"the change would leave {nbk.name} invalid ({problem}); nothing was written") from None
    text = nbformat.writes(nbk.nb, version=nbformat.NO_CONVERT)
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
    on_disk = nbk.path.read_bytes() if nbk.path.exists() else None
    if (_digest(on_disk) if on_disk is not None else "absent") != nbk.digest:
        raise ToolError(f"{nbk.name} changed on disk while the change was being made; nothing was written. "
                        "Read it again with notebook_read.")
    atomic_write(nbk.path, data)
    return f"{nbk.path.stat().st_mtime_ns}-{_digest(data)}"


# ----- changes (pure: they touch only the loaded node) --------------------------------------------

def _find(nbk: Notebook, cell_id: str) -> int:
    for index, cell in enumerate(nbk.cells):
        if cell.id == cell_id:
            return index
    ids = [c.id for c in nbk.cells]
    listed = ", ".join(ids[:30]) + (" …" if len(ids) > 30 else "") if ids else "none: the notebook is empty"
    raise ToolError(f"no cell with id {cell_id!r} in {nbk.name}; its cell ids are: {listed}. "
                    "Ids come from notebook_read; they are not positions.")


def _make_cell(cell_type: str, source: str, like: Any = None) -> Any:
    """A new cell; ``like`` passes on its id, metadata and (where allowed) attachments."""
    cell = getattr(_nbformat().v4, f"new_{cell_type}_cell")(source=source)
    if like is not None:
        cell.id = like.id
        cell.metadata = like.get("metadata", {})
        if cell_type != "code" and "attachments" in like:
            cell.attachments = like.attachments
    return cell


def _clear_outputs(cell: Any) -> str:
    count = len(cell.get("outputs", []))
    cell.outputs = []
    cell.execution_count = None
    return f"{count} output(s) cleared" if count else ""


def apply_edit(nbk: Notebook, cell_id: str, source: str, cell_type: str | None = None) -> Change:
    index = _find(nbk, cell_id)
    cell = nbk.cells[index]
    old_type, before = cell.cell_type, as_text(cell.source)
    new_type = cell_type or old_type
    if before == source and new_type == old_type:
        raise ToolError(f"cell {cell_id} already has this source; nothing to change")
    if new_type != old_type:
        cell = nbk.cells[index] = _make_cell(new_type, source, like=cell)
    cell.source = source
    note = _clear_outputs(cell) if new_type == "code" else ""
    return Change("edited", cell_id, before, source, index + 1, index + 1, old_type, new_type, note)


def apply_insert(nbk: Notebook, after_cell_id: str | None, cell_type: str, source: str) -> Change:
    index = 0 if after_cell_id is None else _find(nbk, after_cell_id) + 1
    cell = _make_cell(cell_type, source)
    existing = {c.id for c in nbk.cells}
    while cell.id in existing:
        cell.id = _nbformat().corpus.words.generate_corpus_id()
    nbk.cells.insert(index, cell)
    where = f"after cell {after_cell_id}" if after_cell_id else "at the top"
    return Change("inserted", cell.id, "", source, None, index + 1, cell_type, cell_type, where)


def apply_delete(nbk: Notebook, cell_id: str) -> Change:
    index = _find(nbk, cell_id)
    cell = nbk.cells.pop(index)
    return Change("deleted", cell_id, as_text(cell.source), "", index + 1, None, cell.cell_type,
                  cell.cell_type, f"{len(nbk.cells)} cell(s) remain")


def apply_move(nbk: Notebook, cell_id: str, after_cell_id: str | None) -> Change:
    if after_cell_id == cell_id:
        raise ToolError("a cell cannot move after itself")
    index = _find(nbk, cell_id)
    if after_cell_id is not None:
        _find(nbk, after_cell_id)  # report an unknown target before touching anything
    cell = nbk.cells.pop(index)
    target = 0 if after_cell_id is None else _find(nbk, after_cell_id) + 1
    if target == index:
        raise ToolError(f"cell {cell_id} is already there; nothing to move")
    nbk.cells.insert(target, cell)
    where = f"after cell {after_cell_id}" if after_cell_id else "to the top"
    source = as_text(cell.source)
    return Change("moved", cell_id, source, source, index + 1, target + 1, cell.cell_type, cell.cell_type, where)


# ----- reports and diffs --------------------------------------------------------------------------

def _ids_note(nbk: Notebook) -> str:
    if not nbk.ids_assigned:
        return ""
    if nbk.legacy_ids:
        return (f"{nbk.name} is nbformat {nbk.source_format}, which stores no cell ids: the ids shown are "
                "derived from position and source; the first change upgrades the file to 4.5 with these ids.")
    return f"{nbk.ids_assigned} cell(s) had a missing or duplicate id: the next change stores the ids shown."


def _written_note(nbk: Notebook) -> str:
    if not nbk.ids_assigned:
        return ""
    if nbk.legacy_ids:
        return (f"The file was nbformat {nbk.source_format} without cell ids: it is now nbformat 4.5 "
                "and stores the ids notebook_read showed (nbformat's upgrade).")
    return f"{nbk.ids_assigned} missing or duplicate cell id(s) were replaced by the ids notebook_read showed."


def _report(nbk: Notebook, ch: Change, version: str) -> str:
    total = len(nbk.cells)
    if ch.verb == "edited":
        kind = ch.new_type if ch.old_type == ch.new_type else f"{ch.old_type} -> {ch.new_type}"
        lines = f"{_count_lines(ch.before)} -> {_count_lines(ch.after)} lines"
        head = f"edited cell {ch.cell_id} ({kind}, #{ch.new_pos} of {total}): {lines}"
    elif ch.verb == "inserted":
        head = f"inserted {ch.new_type} cell {ch.cell_id} at #{ch.new_pos} of {total} ({ch.note})"
    elif ch.verb == "deleted":
        head = f"deleted cell {ch.cell_id} ({ch.old_type}, was #{ch.old_pos})"
    else:
        head = f"moved cell {ch.cell_id} from #{ch.old_pos} to #{ch.new_pos} of {total} ({ch.note})"
    if ch.note and ch.verb in ("edited", "deleted"):
        head += f"; {ch.note}"
    created = " (a new notebook)" if nbk.digest == "absent" else ""
    extra = _written_note(nbk)
    return f"{nbk.name}{created}: {head}\nversion: {version}" + (f"\n{extra}" if extra else "")


def _count_lines(text: str) -> int:
    return len(text.splitlines())


def cell_diff(nbk: Notebook, ch: Change) -> str:
    """A unified diff of one cell's source whose file headers name the cell id, position and type."""
    total = len(nbk.cells)
    old = f"{nbk.name} cell {ch.cell_id} (#{ch.old_pos}, {ch.old_type})" if ch.old_pos else f"{nbk.name} (no such cell yet)"
    new = (f"{nbk.name} cell {ch.cell_id} (#{ch.new_pos} of {total}, {ch.new_type})" if ch.new_pos
           else f"{nbk.name} (cell {ch.cell_id} deleted)")
    if ch.note and ch.verb in ("inserted", "moved"):
        new += f" {ch.note}"
    before = [line + "\n" for line in ch.before.splitlines()]
    after = [line + "\n" for line in ch.after.splitlines()]
    diff = list(difflib.unified_diff(before, after, fromfile=old, tofile=new))
    if not diff:  # a move: the source is the same, so show it as context under the new place
        shown = before[:12]
        diff = [f"--- {old}\n", f"+++ {new}\n", f"@@ -1,{len(shown)} +1,{len(shown)} @@\n",
                *(" " + line for line in shown)]
    if ch.note and ch.verb == "edited":
        diff.append(f"# {ch.note}\n")
    return "".join(diff)


# ----- the flow every change takes ----------------------------------------------------------------

def _change(ctx, path: str, version: str | None, apply: Callable[[Notebook], Change],
            allow_missing: bool = False) -> str:
    with _WRITE_LOCK:
        nbk = load(ctx, path, write=True, allow_missing=allow_missing)
        _check_version(ctx, nbk, version)
        change = apply(nbk)
        new_version = _save(nbk)
    _versions(ctx)[str(nbk.path)] = new_version
    return _report(nbk, change, new_version)


def _preview(ctx, path: str, version: str | None, apply: Callable[[Notebook], Change],
             allow_missing: bool = False) -> str:
    nbk = load(ctx, path, write=True, allow_missing=allow_missing)
    _check_version(ctx, nbk, version)
    return cell_diff(nbk, apply(nbk))


# ----- the tools ----------------------------------------------------------------------------------

def notebook_read(ctx, path: str, cells: list[str] | None = None, include_outputs: bool = False) -> str:
    """Read a Jupyter notebook: each cell's id, type and source, and its outputs when asked.

    Outputs are shrunk: long text keeps its head and tail, images become one line, HTML is reduced to
    its text. The result names the notebook's version; the edit tools check it.

    Args:
        path: The .ipynb file, relative to the workspace root.
        cells: Only these cell ids (in notebook order); all cells when omitted.
        include_outputs: Show the cells' outputs too (default: only a one-line list of them).
    """
    nbk = load(ctx, path, write=False)
    _versions(ctx)[str(nbk.path)] = nbk.version
    chosen = set(cells or ())
    for cell_id in chosen:
        _find(nbk, cell_id)
    limit = ctx.config.output_limit
    budget = OutputBudget(max(400, limit // 10), max(2000, limit // 2), widget_models(nbk.nb.metadata))
    out = [_header(nbk)]
    for number, cell in enumerate(nbk.cells, 1):
        if not chosen or cell.id in chosen:
            out += _render_cell(cell, number, include_outputs, budget)
    if not nbk.cells:
        out.append("(no cells)")
    return "\n".join(out)


def _header(nbk: Notebook) -> str:
    meta = nbk.nb.metadata
    language = (meta.get("kernelspec") or {}).get("name") or (meta.get("language_info") or {}).get("name")
    facts = [f"{len(nbk.cells)} cells", f"nbformat {nbk.source_format}"] + ([f"kernel {language}"] if language else [])
    lines = [f"{nbk.name}: {', '.join(facts)}", f"version: {nbk.version} (the edit tools check it)"]
    note = _ids_note(nbk)
    return "\n".join(lines + ([note] if note else []))


def _render_cell(cell: Any, number: int, include_outputs: bool, budget: OutputBudget) -> list[str]:
    attrs = f'id="{cell.id}" n="{number}" type="{cell.cell_type}"'
    if cell.get("execution_count") is not None:
        attrs += f' exec="{cell.execution_count}"'
    source, elided = elide_data_uris(as_text(cell.source))
    lines = [f"<cell {attrs}>", source, "</cell>"]
    if elided:
        lines.append(f"({elided} base64 data URI(s) elided above: rewriting this cell would drop them)")
    for name, bundle in (cell.get("attachments") or {}).items():
        for mime, data in bundle.items():
            lines.append(f"[attachment {name}: {describe_image(mime, data)}]")
    outputs = cell.get("outputs") or []
    if outputs and include_outputs:
        lines += ["<outputs>", *(budget.render(o) for o in outputs), "</outputs>"]
    elif outputs:
        kinds = list(dict.fromkeys(output_kind(o) for o in outputs))
        lines.append(f"({len(outputs)} output(s): {', '.join(kinds[:6])}; include_outputs=true shows them)")
    return lines


def notebook_edit(ctx, path: str, cell_id: str, source: str, cell_type: CellType | None = None,
                  version: str | None = None) -> str:
    """Replace the source of one notebook cell (by id); an edited code cell loses its stale outputs.

    Args:
        path: The .ipynb file, relative to the workspace root.
        cell_id: The cell's id from notebook_read.
        source: The cell's complete new source.
        cell_type: Change the cell's type too: code, markdown or raw.
        version: The version notebook_read reported; by default the one you last read of this file.
    """
    return _change(ctx, path, version, lambda nbk: apply_edit(nbk, cell_id, source, cell_type))


def notebook_edit_preview(ctx, path: str, cell_id: str, source: str, cell_type: str | None = None,
                          version: str | None = None) -> str:
    return _preview(ctx, path, version, lambda nbk: apply_edit(nbk, cell_id, source, cell_type))


def notebook_insert(ctx, path: str, cell_type: CellType, source: str, after_cell_id: str | None = None,
                    version: str | None = None) -> str:
    """Insert a new cell after the cell with the given id (at the top when none is given).

    On a path with no file yet, this creates a new notebook holding the one cell.

    Args:
        path: The .ipynb file, relative to the workspace root.
        cell_type: code, markdown or raw.
        source: The new cell's source.
        after_cell_id: The id of the cell to insert after; omit to insert at the top.
        version: The version notebook_read reported; by default the one you last read of this file.
    """
    return _change(ctx, path, version, lambda nbk: apply_insert(nbk, after_cell_id, cell_type, source),
                   allow_missing=after_cell_id is None)


def notebook_insert_preview(ctx, path: str, cell_type: str, source: str, after_cell_id: str | None = None,
                            version: str | None = None) -> str:
    return _preview(ctx, path, version, lambda nbk: apply_insert(nbk, after_cell_id, cell_type, source),
                    allow_missing=after_cell_id is None)


def notebook_delete(ctx, path: str, cell_id: str, version: str | None = None) -> str:
    """Delete one notebook cell by id.

    Args:
        path: The .ipynb file, relative to the workspace root.
        cell_id: The cell's id from notebook_read.
        version: The version notebook_read reported; by default the one you last read of this file.
    """
    return _change(ctx, path, version, lambda nbk: apply_delete(nbk, cell_id))


def notebook_delete_preview(ctx, path: str, cell_id: str, version: str | None = None) -> str:
    return _preview(ctx, path, version, lambda nbk: apply_delete(nbk, cell_id))


def notebook_move(ctx, path: str, cell_id: str, after_cell_id: str | None = None,
                  version: str | None = None) -> str:
    """Move one notebook cell to just after another cell (to the top when none is given).

    Args:
        path: The .ipynb file, relative to the workspace root.
        cell_id: The id of the cell to move.
        after_cell_id: The id of the cell it should follow; omit to move it to the top.
        version: The version notebook_read reported; by default the one you last read of this file.
    """
    return _change(ctx, path, version, lambda nbk: apply_move(nbk, cell_id, after_cell_id))


def notebook_move_preview(ctx, path: str, cell_id: str, after_cell_id: str | None = None,
                          version: str | None = None) -> str:
    return _preview(ctx, path, version, lambda nbk: apply_move(nbk, cell_id, after_cell_id))


NOTEBOOK = ToolSet("notebook", [
    function_tool(notebook_read, read_only=True,
                  prompt_hint="cell ids and the version come from here; outputs only with include_outputs=true"),
    function_tool(notebook_edit, preview=notebook_edit_preview),
    function_tool(notebook_insert, preview=notebook_insert_preview),
    function_tool(notebook_delete, preview=notebook_delete_preview),
    function_tool(notebook_move, preview=notebook_move_preview),
], description="Read and change Jupyter notebooks cell by cell, by cell id")
