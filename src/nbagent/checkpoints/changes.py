"""A turn's changes as rows: notebooks cell by cell (by cell id), text files hunk by hunk.

The rows are a pure function of the turn's two snapshots (its checkpoint), so a row's id ("<turn>:<n>")
names the same change on every call and in every process. What the user decided about a row (kept,
undone) is stored apart (nbagent.store.reviews). A notebook cell gives a "source" row per hunk of its
source (difflib, line by line; one whole-cell row when its type changed), an "outputs" row when its
outputs or execution count changed, and "added", "deleted" or "moved" rows; a cell whose position
changed relative to the cells kept in order is "moved" (the longest run of cells kept in order is not).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass
from typing import Any, Iterator, Literal, Sequence

from ..render.escape import escape_html
from .notebooks import _run_state, _text

Kind = Literal["source", "added", "deleted", "moved", "outputs", "file"]
Status = Literal["pending", "kept", "undone", "suggested"]
COLUMNS = ["id", "session", "turn", "path", "cell_id", "kind", "hunk", "start_before", "start_after", "status",
           "before", "after"]


@dataclass(frozen=True)
class ChangeRow:
    """One change of a turn (the contract of docs/notebooks.md, "Reviewing a turn")."""

    id: str
    session: str
    turn: int
    path: str
    cell_id: str | None
    kind: Kind
    hunk: int | None
    """The hunk's index within the cell's source or the text file; None for a whole-cell or whole-file row."""
    before: str
    after: str
    start_before: int = 1
    start_after: int = 1
    status: Status = "pending"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Changes(Sequence[ChangeRow]):
    """A turn's change rows (``agent.changes()``): a sequence, a DataFrame with ``.frame()``, HTML in a notebook."""

    def __init__(self, rows: list[ChangeRow]):
        self.rows = list(rows)

    def __getitem__(self, index):  # type: ignore[override]
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return "\n".join(f"{r.id} {r.status:9} {r.path}" + (f" cell {r.cell_id}" if r.cell_id else "") +
                         f" {r.kind}" + (f" hunk {r.hunk}" if r.hunk is not None else "") for r in self.rows) \
            or "no changes"

    def frame(self):
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows], columns=COLUMNS)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{name}</th>" for name in ("id", "status", "path", "cell", "kind", "hunk", "before",
                                                       "after"))
        body = "".join(
            "<tr>" + "".join(f"<td>{escape_html(str(v))}</td>" for v in (
                r.id, r.status, r.path, r.cell_id or "", r.kind, "" if r.hunk is None else r.hunk)) +
            "".join(f"<td><pre>{escape_html(_clip(t))}</pre></td>" for t in (r.before, r.after)) + "</tr>"
            for r in self.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _clip(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass(frozen=True)
class Hunk:
    """One hunk of a line diff: lines [i1, i2) of the old text became lines [j1, j2) of the new one."""

    i1: int
    i2: int
    j1: int
    j2: int


def hunks(before: str, after: str) -> list[Hunk]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [Hunk(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


@dataclass(frozen=True)
class Spec:
    """A row before its id and status: what it is, for computing (and for restoring)."""

    path: str
    kind: Kind
    cell_id: str | None = None
    hunk: int | None = None
    before: str = ""
    after: str = ""
    start_before: int = 1
    start_after: int = 1


def file_specs(path: str, before: bytes | None, after: bytes | None) -> list[Spec]:
    """The rows of one file the turn changed (None: absent on that side)."""
    if path.endswith(".ipynb"):
        cells = notebook_cells(before), notebook_cells(after)
        if (before is None or cells[0] is not None) and (after is None or cells[1] is not None):
            return _notebook_specs(path, cells[0] or [], cells[1] or [], before is None, after is None)
    old, new = _decoded(before), _decoded(after)
    if before is None and new is not None:
        return [Spec(path, "added", after=new)]
    if after is None and old is not None:
        return [Spec(path, "deleted", before=old)]
    if old is None or new is None:  # binary: the whole file, shown by name only
        return [Spec(path, "file")]
    return [Spec(path, "file", None, n, _lines(old, h.i1, h.i2), _lines(new, h.j1, h.j2), h.i1 + 1, h.j1 + 1)
            for n, h in enumerate(hunks(old, new))]


def _lines(text: str, start: int, end: int) -> str:
    return "".join(text.splitlines(keepends=True)[start:end])


def _decoded(data: bytes | None) -> str | None:
    if data is None or b"\0" in data[:8000]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def notebook_cells(data: bytes | None) -> list[dict] | None:
    """A notebook's cells when every one has an id (else None: it is reviewed as one file)."""
    if data is None:
        return None
    try:
        cells = json.loads(data.decode("utf-8"))["cells"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    if not isinstance(cells, list) or not all(isinstance(c, dict) and c.get("id") for c in cells):
        return None
    return cells


def _notebook_specs(path: str, old: list[dict], new: list[dict], created: bool, removed: bool) -> list[Spec]:
    if created or removed:  # a notebook made or deleted by the turn: one row for the file
        cells = new if created else old
        text = "".join(f"# cell {c['id']}\n{_text(c.get('source'))}\n" for c in cells)
        return [Spec(path, "added" if created else "deleted", before="" if created else text,
                     after=text if created else "")]
    before = {c["id"]: (i, c) for i, c in enumerate(old)}
    after = {c["id"]: (i, c) for i, c in enumerate(new)}
    moved = moved_cells([c["id"] for c in old], [c["id"] for c in new])
    specs: list[Spec] = []
    for j, cell in enumerate(new):
        cid = cell["id"]
        if cid not in before:
            specs.append(Spec(path, "added", cid, None, "", _text(cell.get("source")), 1, j + 1))
            continue
        i, was = before[cid]
        specs += _cell_specs(path, cid, was, cell)
        if cid in moved:
            specs.append(Spec(path, "moved", cid, None, "", "", i + 1, j + 1))
    for cid, (i, was) in before.items():
        if cid not in after:
            specs.append(Spec(path, "deleted", cid, None, _text(was.get("source")), "", i + 1, 1))
    return specs


def _cell_specs(path: str, cid: str, was: dict, cell: dict) -> list[Spec]:
    specs = []
    old, new = _text(was.get("source")), _text(cell.get("source"))
    if was.get("cell_type") != cell.get("cell_type"):
        specs.append(Spec(path, "source", cid, None, old, new))
    else:
        specs += [Spec(path, "source", cid, n, _lines(old, h.i1, h.i2), _lines(new, h.j1, h.j2), h.i1 + 1, h.j1 + 1)
                  for n, h in enumerate(hunks(old, new))]
    if cell.get("cell_type") == "code" and was.get("cell_type") == "code" and _run_state(was) != _run_state(cell):
        specs.append(Spec(path, "outputs", cid, None, outputs_text(was), outputs_text(cell)))
    return specs


def moved_cells(old: list[str], new: list[str]) -> set[str]:
    """Cells of both lists not in the longest run kept in order."""
    common = set(old) & set(new)
    a, b = [c for c in old if c in common], [c for c in new if c in common]
    kept: set[str] = set()
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        kept.update(a[block.a:block.a + block.size])
    return common - kept


def outputs_text(cell: dict) -> str:
    """A code cell's outputs as a few lines of text (what a row shows; the bulk of an image is not)."""
    lines = [f"[{cell.get('execution_count')}]"]
    for out in cell.get("outputs") or []:
        if not isinstance(out, dict):
            continue
        if out.get("output_type") == "stream":
            lines.append(_text(out.get("text")))
        elif out.get("output_type") == "error":
            lines.append(f"{out.get('ename')}: {out.get('evalue')}")
        else:
            data = out.get("data") or {}
            lines.append(_text(data.get("text/plain")) if "text/plain" in data else ", ".join(sorted(data)))
    return _clip("\n".join(lines), 2000)


def numbered(session: str, turn: int, specs: list[Spec]) -> Iterator[tuple[str, Spec]]:
    """Each spec with its row id (its position among the turn's rows)."""
    for n, spec in enumerate(specs, start=1):
        yield f"{turn}:{n}", spec
