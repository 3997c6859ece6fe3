"""Notebook tools: read and change .ipynb cells by id, in the live notebook when one is open.

Cells are addressed by their nbformat cell id, never by position, so an id the model read stays
right when cells move. The tools read and write through a notebook store (nbagent.tools.nbdoc):
the live document of a Jupyter server when the notebook is open there, else the file. Every change
- names the cells it touches with the version (v=) the model read them at; the store refuses it
  when such a cell changed since ("read again"), and nothing else is compared, so the user typing
  or saving elsewhere in the notebook never blocks or loses an edit;
- clears the outputs of an edited code cell: they belonged to the old source.
``notebook_run`` runs cells in the notebook's own kernel through the Jupyter server.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Callable, Literal

from .. import events as ev
from ..errors import ToolError
from ..render.text import kernel_line
from .nbshrink import OutputBudget, as_text, widget_models
from . import nbdoc, nbstores, nbsuggest
from .base import ToolSet, function_tool
from .nbcheck import notebook_check
from .nbdoc import Snapshot, cell_token, find, range_source, token_of
from .nbreport import Change, cell_diff, header, render_cell, report, source_caps, CELL_OVERHEAD, CUT_NOTE

TOKENS_KEY = "notebook_tokens"
"""ctx.extras[TOKENS_KEY]: resolved path -> {cell id: the version this agent last read or wrote}."""

CellType = Literal["code", "markdown", "raw"]
Plan = Callable[[Any, str, Snapshot], "tuple[Change, dict]"]


def _tokens(ctx, path: Path) -> dict[str, str]:
    return ctx.extras.setdefault(TOKENS_KEY, {}).setdefault(str(path), {})


def _target(ctx, path: str, *, write: bool) -> tuple[Path, str]:
    target = ctx.workspace.resolve(path, write=write)
    return target, ctx.workspace.rel(target)


def _token_for(ctx, path: Path, name: str, cell_id: str, version: str | None) -> str:
    token = version or _tokens(ctx, path).get(cell_id)
    if token is None:
        raise ToolError(f"read {name} with notebook_read first (at least cell {cell_id}): changes start "
                        "from the cells you read")
    return token


def _cells(snap: Snapshot) -> list:
    return snap.notebook["cells"]


# ----- plans: what a tool will do, worked out on the snapshot (nothing is written) ---------------

def plan_edit(ctx, path: Path, name: str, snap: Snapshot, cell_id: str, source: str, cell_type: str | None,
              version: str | None, old_text: str | None) -> tuple[Change, dict]:
    index = find(_cells(snap), cell_id, name)
    cell = _cells(snap)[index]
    old_type, before = cell["cell_type"], as_text(cell.get("source", ""))
    op: dict = {"op": "edit", "cell_id": cell_id, "source": source, "cell_type": cell_type}
    if old_text is not None:
        after = range_source(before, old_text, source, cell_id)[2]
        op["old_text"] = old_text  # no token: only this range changes, the rest of the cell is kept
    else:
        after = source
        op["token"] = _token_for(ctx, path, name, cell_id, version)
        nbdoc.check_token(cell, op, name)
    new_type = cell_type or old_type
    if before == after and new_type == old_type:
        raise ToolError(f"cell {cell_id} already has this source; nothing to change")
    count = len(cell.get("outputs") or [])
    note = f"{count} output(s) cleared" if new_type == "code" and count else ""
    return Change("edited", cell_id, before, after, index + 1, index + 1, old_type, new_type, note), op


def plan_insert(ctx, path: Path, name: str, snap: Snapshot, cell_type: str, source: str,
                after_cell_id: str | None, version: str | None) -> tuple[Change, dict]:
    # Read means notebook_read ran on it, even if it found no cells: an empty notebook has been read.
    if snap.exists and str(path) not in ctx.extras.get(TOKENS_KEY, {}) and version is None:
        raise ToolError(f"read {name} with notebook_read first: changes start from the cells you read")
    index = 0
    if after_cell_id is not None:
        index = find(_cells(snap), after_cell_id, name) + 1
        if version is not None:
            nbdoc.check_token(_cells(snap)[index - 1], {"cell_id": after_cell_id, "token": version}, name)
    taken = {c.get("id") for c in _cells(snap)}
    cell_id = uuid.uuid4().hex[:8]
    while cell_id in taken:
        cell_id = uuid.uuid4().hex[:8]
    cell = nbdoc.new_cell(cell_type, source, cell_id)
    where = f"after cell {after_cell_id}" if after_cell_id else "at the top"
    change = Change("inserted", cell_id, "", source, None, index + 1, cell_type, cell_type, where)
    return change, {"op": "insert", "after_cell_id": after_cell_id, "cell": cell}


def plan_delete(ctx, path: Path, name: str, snap: Snapshot, cell_id: str, version: str | None) -> tuple[Change, dict]:
    index = find(_cells(snap), cell_id, name)
    cell = _cells(snap)[index]
    op = {"op": "delete", "cell_id": cell_id, "token": _token_for(ctx, path, name, cell_id, version)}
    nbdoc.check_token(cell, op, name)
    return Change("deleted", cell_id, as_text(cell.get("source", "")), "", index + 1, None, cell["cell_type"],
                  cell["cell_type"], f"{len(_cells(snap)) - 1} cell(s) remain"), op


def plan_move(ctx, path: Path, name: str, snap: Snapshot, cell_id: str, after_cell_id: str | None,
              version: str | None) -> tuple[Change, dict]:
    if after_cell_id == cell_id:
        raise ToolError("a cell cannot move after itself")
    cells = _cells(snap)
    index = find(cells, cell_id, name)
    if after_cell_id is not None:
        find(cells, after_cell_id, name)  # report an unknown target before anything else
    op = {"op": "move", "cell_id": cell_id, "after_cell_id": after_cell_id,
          "token": _token_for(ctx, path, name, cell_id, version)}
    nbdoc.check_token(cells[index], op, name)
    rest = cells[:index] + cells[index + 1:]
    target = 0 if after_cell_id is None else find(rest, after_cell_id, name) + 1
    if target == index:
        raise ToolError(f"cell {cell_id} is already there; nothing to move")
    cell = cells[index]
    source = as_text(cell.get("source", ""))
    where = f"after cell {after_cell_id}" if after_cell_id else "to the top"
    return Change("moved", cell_id, source, source, index + 1, target + 1, cell["cell_type"],
                  cell["cell_type"], where), op


# ----- the flow every change takes ----------------------------------------------------------------

def _change(ctx, path: str, plan: Callable[[Path, str, Snapshot], tuple[Change, dict]],
            allow_missing: bool = False) -> str:
    target, name = _target(ctx, path, write=True)
    before = nbstores.read(ctx, target, name, allow_missing=allow_missing)
    change, op = plan(target, name, before)
    if nbsuggest.wanted(ctx, before.exists):  # review before writing: recorded for the user, not written
        return nbsuggest.suggest(ctx, name, change, op)
    after = nbstores.apply(ctx, target, name, [op], allow_missing=allow_missing)
    tokens = _tokens(ctx, target)
    token = None
    if change.verb == "deleted":
        tokens.pop(change.cell_id, None)
    elif change.verb != "moved":
        token = tokens[change.cell_id] = cell_token(change.new_type, change.after)
    return report(name, before, after, change, token)


def _preview(ctx, path: str, plan: Callable[[Path, str, Snapshot], tuple[Change, dict]],
             allow_missing: bool = False) -> str:
    target, name = _target(ctx, path, write=True)
    snap = nbstores.read(ctx, target, name, allow_missing=allow_missing)
    change, _ = plan(target, name, snap)
    grows = 1 if change.verb == "inserted" else -1 if change.verb == "deleted" else 0
    return cell_diff(name, len(_cells(snap)) + grows, change)


# ----- the tools ----------------------------------------------------------------------------------

def notebook_read(ctx, path: str, cells: list[str] | None = None, include_outputs: bool = False) -> str:
    """Read a Jupyter notebook: each cell's id, type, version and source, and its outputs when asked.

    An open notebook is read as it is now, unsaved typing included; a cell's v= is the version the
    edit tools check.

    Args:
        path: The .ipynb file.
        cells: Only these cell ids (in notebook order); all cells when omitted.
        include_outputs: Show the cells' outputs too (default: a one-line list).
    """
    target, name = _target(ctx, path, write=False)
    snap = nbstores.read(ctx, target, name)
    all_cells = _cells(snap)
    chosen = set(cells or ())
    for cell_id in chosen:
        find(all_cells, cell_id, name)
    tokens = _tokens(ctx, target)
    limit = ctx.config.output_limit
    budget = OutputBudget(max(400, limit // 10), max(2000, limit // 2),
                          widget_models(snap.notebook.get("metadata") or {}), ctx.image_sink() if include_outputs else None)
    out = [header(name, snap)]
    shown = [(n, c) for n, c in enumerate(all_cells, 1) if not chosen or c["id"] in chosen]
    # Sources share most of the output limit, so a notebook of hundreds of cells still shows every
    # cell's id, type and first line instead of being cut in the middle by the generic limit.
    overhead = len(shown) * CELL_OVERHEAD + len(out[0])
    cap = source_caps([len(as_text(c.get("source", ""))) for _, c in shown], limit * 9 // 10 - overhead)
    if cap is not None:
        out.append(CUT_NOTE)
    for number, cell in shown:
        tokens[cell["id"]] = token_of(cell)
        out += render_cell(cell, number, include_outputs, budget, cap)
    if not all_cells:
        out.append("(no cells)")
    return "\n".join(out)


def notebook_edit(ctx, path: str, cell_id: str, source: str, cell_type: CellType | None = None,
                  version: str | None = None, old_text: str | None = None) -> str:
    """Replace the source of one notebook cell (by id), or one range of it; stale outputs are cleared.

    Args:
        path: The .ipynb file.
        cell_id: The cell's id from notebook_read.
        source: The cell's complete new source; with old_text, the text that replaces old_text.
        cell_type: Change the cell's type too.
        version: The cell's v= (default: the one you last read).
        old_text: Replace only this exact text (once in the cell), keeping the rest.
    """
    return _change(ctx, path, lambda p, n, s: plan_edit(ctx, p, n, s, cell_id, source, cell_type, version, old_text))


def notebook_edit_preview(ctx, path: str, cell_id: str, source: str, cell_type: str | None = None,
                          version: str | None = None, old_text: str | None = None) -> str:
    return _preview(ctx, path, lambda p, n, s: plan_edit(ctx, p, n, s, cell_id, source, cell_type, version, old_text))


def notebook_insert(ctx, path: str, cell_type: CellType, source: str, after_cell_id: str | None = None,
                    version: str | None = None) -> str:
    """Insert a new cell after a given cell; on a new path this creates the notebook.

    Args:
        path: The .ipynb file.
        cell_type: code, markdown or raw.
        source: The new cell's source.
        after_cell_id: The id of the cell to insert after; omit to insert at the top.
        version: The v= of after_cell_id; refused if that cell changed since.
    """
    return _change(ctx, path, lambda p, n, s: plan_insert(ctx, p, n, s, cell_type, source, after_cell_id, version),
                   allow_missing=after_cell_id is None)


def notebook_insert_preview(ctx, path: str, cell_type: str, source: str, after_cell_id: str | None = None,
                            version: str | None = None) -> str:
    return _preview(ctx, path, lambda p, n, s: plan_insert(ctx, p, n, s, cell_type, source, after_cell_id, version),
                    allow_missing=after_cell_id is None)


def notebook_delete(ctx, path: str, cell_id: str, version: str | None = None) -> str:
    """Delete one notebook cell by id.

    Args:
        path: The .ipynb file.
        cell_id: The cell's id from notebook_read.
        version: The cell's v= (default: the one you last read).
    """
    return _change(ctx, path, lambda p, n, s: plan_delete(ctx, p, n, s, cell_id, version))


def notebook_delete_preview(ctx, path: str, cell_id: str, version: str | None = None) -> str:
    return _preview(ctx, path, lambda p, n, s: plan_delete(ctx, p, n, s, cell_id, version))


def notebook_move(ctx, path: str, cell_id: str, after_cell_id: str | None = None,
                  version: str | None = None) -> str:
    """Move one notebook cell to just after another cell.

    Args:
        path: The .ipynb file.
        cell_id: The id of the cell to move.
        after_cell_id: The id of the cell it should follow; omit to move it to the top.
        version: The moved cell's v= (default: the one you last read).
    """
    return _change(ctx, path, lambda p, n, s: plan_move(ctx, p, n, s, cell_id, after_cell_id, version))


def notebook_move_preview(ctx, path: str, cell_id: str, after_cell_id: str | None = None,
                          version: str | None = None) -> str:
    return _preview(ctx, path, lambda p, n, s: plan_move(ctx, p, n, s, cell_id, after_cell_id, version))


def notebook_run(ctx, path: str, cell_ids: list[str]) -> str:
    """Run cells of a notebook open in JupyterLab, in that notebook's own kernel, in the order given.

    Outputs go into the open notebook as if the user ran the cells; the result shows them, shrunk.
    Needs the notebook open in JupyterLab, with a kernel.

    Args:
        path: The .ipynb file.
        cell_ids: The ids of the code cells to run (from notebook_read).
    """
    if not cell_ids:
        raise ToolError("give at least one cell id to run")
    target, name = _target(ctx, path, write=True)
    ledger = ctx.extras.get("kernel_ledger") if ctx.kernel is None else None
    result = nbstores.run(ctx, target, name, list(cell_ids), watch=ledger.watch_args() if ledger else None)
    if ledger is not None and isinstance(result.get("kernel_record"), dict):
        ledger.recorded(str(result.get("kernel_id")), result["kernel_record"])  # undo reaches it there
    tokens = _tokens(ctx, target)
    limit = ctx.config.output_limit
    budget = OutputBudget(max(400, limit // 10), max(2000, limit // 2), {}, ctx.image_sink())
    out = [f"{name}: ran {len(result['cells'])} cell(s) in its kernel"]
    for cell in result["cells"]:
        tokens.setdefault(cell["id"], token_of(cell))
        status = cell.get("status", "ok")
        out.append(f'<cell id="{cell["id"]}" exec="{cell.get("execution_count")}" status="{status}">')
        out += [budget.render(o, f"{name} cell {cell['id']} output {i}")
                for i, o in enumerate(cell.get("outputs") or [], 1)] or ["(no output)"]
        out.append("</cell>")
    if result.get("note"):
        out.append(result["note"])
    change = result.get("kernel_changed")
    if change and ctx.kernel is None:  # inside the kernel, the turn's guard records it (with undo)
        out.append(_kernel_changed(ctx, change, (result.get("kernel_record") or {}).get("dropped") or []))
    return "\n".join(out)


def notebook_run_preview(ctx, path: str, cell_ids: list[str]) -> None:
    """Before the approval card: a run the notebook's store would refuse is refused now, unasked."""
    target, name = _target(ctx, path, write=True)
    nbstores.check_run(ctx, target, name)
    return None


def _kernel_changed(ctx, change: dict, dropped: list) -> str:
    """The notebook kernel's change as told by its watcher: an event for the views, a line for the model."""
    names = {k: [str(n) for n in change.get(k) or []] for k in ("added", "rebound", "deleted", "mutated", "unchecked")}
    ctx.emit(ev.KernelChanged(call_id=ctx.call_id, turn_id=ctx.turn_id, dropped=[str(d) for d in dropped], **names))
    return kernel_line(names["added"], names["rebound"], names["deleted"], names["mutated"], names["unchecked"])


NOTEBOOK = ToolSet("notebook", [
    function_tool(notebook_read, read_only=True,
                  prompt_hint="cell ids and versions (v=) come from here; outputs only with include_outputs=true"),
    function_tool(notebook_edit, preview=notebook_edit_preview),
    function_tool(notebook_insert, preview=notebook_insert_preview),
    function_tool(notebook_delete, preview=notebook_delete_preview),
    function_tool(notebook_move, preview=notebook_move_preview),
    # notebook_run runs code in the user's kernel: it asks even in "auto" mode unless configured.
    function_tool(notebook_run, approval="always_ask", runs="kernel", preview=notebook_run_preview),
    # Runs the notebook's code: a copy in a fresh kernel, confined by the sandbox (never read-only).
    function_tool(notebook_check, runs="sandbox",
                  prompt_hint="run it after changing code cells when the user wants a working notebook"),
], description="Read and change Jupyter notebooks cell by cell, by cell id; run cells of an open notebook")
