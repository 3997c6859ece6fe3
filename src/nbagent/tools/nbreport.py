"""What the notebook tools tell the model: a notebook's cells as text, change reports and cell diffs."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from .nbshrink import OutputBudget, as_text, describe_image, elide_data_uris, output_kind
from .nbdoc import Snapshot, token_of

WHERE = {
    "file": "the file (no open view holds it)",
    "live document": "the live document open in JupyterLab: changes show there at once",
    "open view": "the notebook open in JupyterLab: changes go through its view and are saved",
}


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


def header(name: str, snap: Snapshot) -> str:
    nb = snap.notebook
    meta = nb.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    language = _name_in(meta.get("kernelspec")) or _name_in(meta.get("language_info"))
    facts = [f"{len(nb['cells'])} cells", f"nbformat {snap.source_format}"] + ([f"kernel {language}"] if language else [])
    lines = [f"{name}: {', '.join(facts)}",
             f"read from {WHERE.get(snap.where, snap.where)}; v= is each cell's version (the edit tools check it)"]
    note = ids_note(name, snap)
    return "\n".join(lines + ([note] if note else []))


def _name_in(value: object) -> str:
    """A kernelspec's or language_info's name; a file may hold a string (or anything) there instead."""
    if isinstance(value, dict):
        return str(value.get("name") or "")
    return value if isinstance(value, str) else ""


def ids_note(name: str, snap: Snapshot) -> str:
    if not snap.ids_assigned and not snap.legacy_ids:
        return ""
    if snap.legacy_ids:
        return (f"{name} is nbformat {snap.source_format}, which stores no cell ids: the ids shown are "
                "derived from position and source; the first change upgrades it to 4.5 with these ids.")
    return f"{snap.ids_assigned} cell(s) had a missing or duplicate id: the next change stores the ids shown."


def written_note(name: str, snap: Snapshot) -> str:
    if snap.legacy_ids:
        return (f"The notebook was nbformat {snap.source_format} without cell ids: it is now nbformat 4.5 "
                "and stores the ids notebook_read showed.")
    if snap.ids_assigned:
        return f"{snap.ids_assigned} missing or duplicate cell id(s) were replaced by the ids notebook_read showed."
    return ""


def render_cell(cell: Any, number: int, include_outputs: bool, budget: OutputBudget,
                source_cap: int | None = None) -> list[str]:
    """One cell for the model; a source longer than ``source_cap`` keeps its first lines and says how
    to read the rest (the id, type and first line are always shown)."""
    attrs = f'id="{cell["id"]}" n="{number}" type="{cell.get("cell_type", "?")}" v="{token_of(cell)}"'
    if cell.get("execution_count") is not None:
        attrs += f' exec="{cell["execution_count"]}"'
    source, elided = elide_data_uris(as_text(cell.get("source", "")))
    lines = [f"<cell {attrs}>", _capped(source, source_cap, cell["id"]), "</cell>"]
    if elided:
        lines.append(f"({elided} base64 data URI(s) elided above: rewriting this cell would drop them)")
    attachments = cell.get("attachments")
    for attachment, bundle in (attachments.items() if isinstance(attachments, dict) else ()):
        for mime, data in (bundle.items() if isinstance(bundle, dict) else ()):
            lines.append(f"[attachment {attachment}: {describe_image(mime, data)}]")
    outputs = cell.get("outputs") or []
    if outputs and include_outputs:
        lines += ["<outputs>", *(budget.render(o, f"cell {cell['id']} output {i}") for i, o in enumerate(outputs, 1)),
                  "</outputs>"]
    elif outputs:
        kinds = list(dict.fromkeys(output_kind(o) for o in outputs))
        lines.append(f"({len(outputs)} output(s): {', '.join(kinds[:6])}; include_outputs=true shows them)")
    return lines


def _capped(source: str, cap: int | None, cell_id: str) -> str:
    if cap is None or len(source) <= cap:
        return source
    lines = source.splitlines(keepends=True)
    kept, used = [], 0
    for line in lines:
        if kept and used + len(line) > cap:
            break
        kept.append(line[:max(cap, 120)])
        used += len(line)
    hidden = len(lines) - len(kept)
    shown = "".join(kept).rstrip("\n")
    return f"{shown}\n[+{hidden} lines]"


CELL_OVERHEAD = 75
CUT_NOTE = "[+N lines] ends a cell cut to fit: notebook_read with cells=[its id] shows it whole"
"""Characters around each cell's source: its <cell ...> line, </cell> and a cut note."""


def source_caps(sizes: list[int], budget: int) -> int | None:
    """The largest per-cell size so that the cells' sources, each cut to it, fit in ``budget``
    (None: everything fits). Small cells stay whole; only the longest are cut."""
    if sum(sizes) <= budget:
        return None
    remaining, left = budget, len(sizes)
    for size in sorted(sizes):
        fair = remaining // left
        if size > fair:
            return max(fair, 0)  # 0: only each cut cell's first line
        remaining -= size
        left -= 1
    return None


def report(name: str, before: Snapshot, after: Snapshot, ch: Change, token: str | None) -> str:
    total = len(after.notebook["cells"])
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
    created = " (a new notebook)" if not before.exists else ""
    lines = [f"{name}{created}: {head}"]
    if token:
        lines.append(f"cell {ch.cell_id} is now v={token}")
    if after.where != "file":
        lines.append(f"written to {WHERE.get(after.where, after.where)}")
    extra = written_note(name, before)
    return "\n".join(lines + ([extra] if extra else []))


def _count_lines(text: str) -> int:
    return len(text.splitlines())


def cell_diff(name: str, total: int, ch: Change) -> str:
    """A unified diff of one cell's source whose file headers name the cell id, position and type."""
    old = f"{name} cell {ch.cell_id} (#{ch.old_pos}, {ch.old_type})" if ch.old_pos else f"{name} (no such cell yet)"
    new = (f"{name} cell {ch.cell_id} (#{ch.new_pos} of {total}, {ch.new_type})" if ch.new_pos
           else f"{name} (cell {ch.cell_id} deleted)")
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
