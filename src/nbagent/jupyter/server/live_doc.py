"""Edits on a collaboration room's live notebook (a jupyter_ydoc YNotebook over pycrdt).

Every call runs on the server's event loop and puts one operation list in one transaction, so a
collaborator sees the edit whole and the room saves it. The token of a touched cell is checked
inside that transaction, right before the change. Sources change by their differing ranges only,
so what others type elsewhere, in the same cell too, is kept. pycrdt's Text counts UTF-8 bytes,
hence the byte offsets below. Moves are a delete plus an insert of a copy: the browser's Yjs does
not apply the shared model's native move. A notebook older than 4.5 has ids that the room makes up
on each load and does not save: the first edit sets nbformat_minor to 5, so the ids are kept.
"""

from __future__ import annotations

import difflib
from typing import Any

from pycrdt import Map, Text

from ...errors import ToolError
from ...tools.nbshrink import as_text
from ...tools.nbdoc import Snapshot, check_token, new_cell, range_source

ORIGIN = "nbagent"


def _py(value: Any) -> Any:
    """pycrdt values as plain Python; Yjs numbers arrive as floats (execution_count 3.0)."""
    value = value.to_py() if hasattr(value, "to_py") else value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _py(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_py(v) for v in value]
    return value


def _cell(ycell: Any) -> dict:
    cell = _py(ycell)
    cell["source"] = as_text(cell.get("source", ""))
    for output in cell.get("outputs") or ():
        if output.get("output_type") == "stream":
            output["text"] = as_text(output.get("text", ""))
    return cell


def snapshot(doc: Any) -> Snapshot:
    meta = _py(doc._ymeta)
    major, minor = int(meta.get("nbformat", 4)), int(meta.get("nbformat_minor", 5))
    cells = [_cell(ycell) for ycell in doc.ycells]
    nb = {"cells": cells, "metadata": meta.get("metadata", {}), "nbformat": major, "nbformat_minor": minor}
    return Snapshot(nb, "live document", True, f"{major}.{minor}", (major, minor) < (4, 5), 0)


def _index(doc: Any, cell_id: str, name: str) -> int:
    for index, ycell in enumerate(doc.ycells):
        if ycell.get("id") == cell_id:
            return index
    ids = [str(ycell.get("id")) for ycell in doc.ycells]
    raise ToolError(f"no cell with id {cell_id!r} in {name}; its cell ids are: {', '.join(ids[:30])}. "
                    "Ids come from notebook_read; they are not positions.")


def apply(doc: Any, ops: list[dict], name: str) -> None:
    with doc.ydoc.transaction(origin=ORIGIN):
        for op in ops:
            _apply(doc, op, name)
        if int(_py(doc._ymeta.get("nbformat_minor", 5))) < 5:
            doc._ymeta["nbformat_minor"] = 5  # keep the ids of a pre-4.5 notebook when the room saves


def _apply(doc: Any, op: dict, name: str) -> None:
    kind = op.get("op")
    if kind == "insert":
        after = op.get("after_cell_id")
        index = 0 if after is None else _index(doc, after, name) + 1
        doc.ycells.insert(index, doc.create_ycell(dict(op["cell"])))
        return
    index = _index(doc, op["cell_id"], name)
    ycell = doc.ycells[index]
    check_token({"cell_type": ycell.get("cell_type"), "source": str(ycell["source"])}, op, name)
    if kind == "edit":
        _edit(doc, index, op)
    elif kind == "delete":
        del doc.ycells[index]
    elif kind == "move":
        copy = _cell(ycell)
        del doc.ycells[index]
        after = op.get("after_cell_id")
        target = 0 if after is None else _index(doc, after, name) + 1
        doc.ycells.insert(target, doc.create_ycell(copy))
    elif kind == "outputs":
        _set_outputs(ycell, op["outputs"], op.get("execution_count"))
    else:
        raise ToolError(f"unknown notebook operation {kind!r}")


def _edit(doc: Any, index: int, op: dict) -> None:
    ycell = doc.ycells[index]
    text = ycell["source"]
    current = str(text)
    new_type = op.get("cell_type") or ycell["cell_type"]
    if op.get("old_text") is not None:
        start, end, source = range_source(current, op["old_text"], op["source"], op["cell_id"])
        _replace(text, current, start, end, op["source"])
    else:
        source = op["source"]
        _diff_into(text, current, source)
    if new_type != ycell["cell_type"]:
        doc.ycells[index] = doc.create_ycell(new_cell(new_type, source, op["cell_id"], like=_cell(ycell)))
    elif new_type == "code":
        _set_outputs(ycell, [], None)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _replace(ytext: Text, current: str, start: int, end: int, new: str) -> None:
    """Replace characters start:end of ``current`` (held in ``ytext``) by ``new``, in UTF-8 offsets."""
    at = _bytes(current[:start])
    if end > start:
        del ytext[at:at + _bytes(current[start:end])]
    if new:
        ytext.insert(at, new)


def _diff_into(ytext: Text, current: str, wanted: str) -> None:
    """Turn ``current`` into ``wanted`` by its differing ranges, last first so offsets stay right."""
    matcher = difflib.SequenceMatcher(None, current, wanted, autojunk=False)
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag != "equal":
            _replace(ytext, current, i1, i2, wanted[j1:j2])


def _set_outputs(ycell: Any, outputs: list[dict], execution_count: int | None) -> None:
    youtputs = ycell["outputs"]
    del youtputs[:]
    for output in outputs:
        output = dict(output)
        if output.get("output_type") == "stream":
            output["text"] = Text(as_text(output.get("text", "")))
        youtputs.append(Map(output))
    ycell["execution_count"] = execution_count
    if "execution_state" in ycell:
        ycell["execution_state"] = "idle"

