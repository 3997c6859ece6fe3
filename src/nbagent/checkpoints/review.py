"""Reviewing a turn: its changes as rows, kept, undone or redone one by one (docs/notebooks.md).

The rows come from the turn's checkpoint (nbagent.checkpoints.changes); what the user decided about each
is in the workspace database (nbagent.store.reviews), so the server and a kernel's ``%agent`` review the
same turns. A partial undo writes only the picked rows back: a notebook through its notebook store (the
open notebook's live document or view when there is one, else the file), a text file hunk by hunk. It
refuses a row whose cell or lines were changed since, as a whole-turn undo refuses a changed file, and
then records the workspace's snapshot so that a later whole-turn undo or redo starts from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import ToolError
from ..store.reviews import Decision, ReviewLog
from ..workspace.atomic import atomic_write
from ..workspace.safe_read import read_bytes
from .cell_review import CHANGED, plan
from .changes import ChangeRow, Changes, Spec, file_specs, notebook_cells, numbered
from .engine import Checkpoints
from .gitrepo import CheckpointError
from .hunks import revise
from .manifest import TurnCheckpoint
from .restore import _inside

AWAITING = ("pending", "suggested")
CACHED_TURNS = 64
"""Turns whose rows (and files' two sides) a process keeps computed, keyed by their two snapshots."""


@dataclass
class Reviewed:
    """What a keep, undo or redo of rows did: the rows done, those refused (with why), the files written."""

    action: str
    session: str
    turn: int
    done: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    pending: dict[str, int] = field(default_factory=dict)
    """Path -> rows of the turn still awaiting review there, after this."""

    def to_dict(self) -> dict[str, Any]:
        key = {"undo": "undone", "redo": "redone", "keep": "kept"}[self.action]
        return {"session": self.session, "turn": self.turn, key: list(self.done),
                "refused": [{"id": i, "reason": r} for i, r in self.refused]}


@dataclass
class _Turn:
    entry: TurnCheckpoint | None
    specs: list[tuple[str, Spec]]
    sides: dict[str, tuple[bytes | None, bytes | None]]
    """Path -> its bytes before and after the turn."""


_SPECS: dict[tuple[str, str, int], "_Turn"] = {}


class Review:
    """The review of one session's turns (``checkpoints``: that session's; ``log``: the database's)."""

    def __init__(self, checkpoints: Checkpoints, log: ReviewLog):
        self.checkpoints = checkpoints
        self.log = log
        self._cache = _SPECS  # rows are a function of the two snapshots: shared by every Review of the process

    @property
    def session_id(self) -> str:
        return self.checkpoints.session_id

    # ----- reading ---------------------------------------------------------------------------
    def turns(self) -> list[int]:
        """The turns with rows (a checkpoint not undone, or suggestions), oldest first."""
        done = {e.turn for e in self.checkpoints.list() if not e.undone}
        suggested = {t for s, t in self.log.suggested_turns(awaiting=False) if s == self.session_id}
        return sorted(done | suggested)

    def changes(self, turn: int | None = None) -> Changes:
        """The rows of ``turn`` (default: the newest turn with rows), with their status."""
        turn = self._default(turn)
        if turn is None:
            return Changes([])
        return Changes(self._rows(turn, self._turn(turn), self.log.decisions(self.session_id, turn)))

    def _default(self, turn: int | None) -> int | None:
        if turn is not None:
            return turn
        turns = self.turns()
        return turns[-1] if turns else None

    def _turn(self, turn: int) -> _Turn:
        entry = self.checkpoints.manifest.find(turn)
        if entry is None or not entry.after:
            return _Turn(None, [], {})
        key = (entry.before, entry.after, entry.turn)
        if key not in self._cache:
            if len(self._cache) >= CACHED_TURNS:
                self._cache.clear()
            self._cache[key] = self._read(entry)
        cached = self._cache[key]
        return _Turn(entry, cached.specs, cached.sides)

    def _read(self, entry: TurnCheckpoint) -> _Turn:
        store = self.checkpoints.store
        files = set(entry.files)
        changes = {p: c for p, c in store.changes(entry.before, entry.after).items() if p in files}
        blobs = store.read([e for pair in changes.values() for e in pair if e is not None])
        sides = {p: (blobs.get(old.oid) if old else None, blobs.get(new.oid) if new else None)
                 for p, (old, new) in changes.items()}
        specs = [s for path in sorted(sides) for s in file_specs(path, *sides[path])]
        return _Turn(entry, list(numbered(self.session_id, entry.turn, specs)), sides)

    def _rows(self, turn: int, data: _Turn, decisions: dict[str, Decision]) -> list[ChangeRow]:
        whole_undone = data.entry is not None and data.entry.undone
        rows = []
        for row_id, spec in data.specs:
            decided = decisions.get(row_id)
            status = "undone" if whole_undone else (decided.status if decided else "pending")
            rows.append(_row(row_id, self.session_id, turn, spec, status))
        for row_id, decided in sorted(decisions.items()):
            if decided.data is not None:
                spec = _spec_of(decided.data)
                rows.append(_row(row_id, self.session_id, turn, spec, decided.status))
        return rows

    # ----- deciding --------------------------------------------------------------------------
    def keep(self, turn: int | None, only: Iterable[Any] | None = None) -> Reviewed:
        """Mark rows kept (a suggestion: applied first); with ``only`` None, every row awaiting review."""
        turn = self._need(turn)
        rows, data, decisions = self._load(turn)
        picked = [r for r in select(rows, only) if r.status in AWAITING]
        done = Reviewed("keep", self.session_id, turn)
        kept = []
        for row in picked:
            if row.status == "suggested":
                reason = self._apply_suggestion(row, decisions[row.id])
                if reason:
                    done.refused.append((row.id, reason))
                    continue
                done.files.append(row.path)
            kept.append(row)
        self.log.mark(self.session_id, turn, [(r.id, r.path) for r in kept], "kept")
        done.done = [r.id for r in kept]
        return self._finish(done, rows)

    def undo(self, turn: int | None, only: Iterable[Any] | None = None) -> Reviewed:
        return self._flip(self._need(turn), only, undo=True)

    def redo(self, turn: int | None, only: Iterable[Any] | None = None) -> Reviewed:
        return self._flip(self._need(turn), only, undo=False)

    def last_undo(self) -> tuple[int, list[str]] | None:
        """The newest partial undo still in force (what a plain redo takes back)."""
        return self.log.last_undo(self.session_id)

    def _need(self, turn: int | None) -> int:
        turn = self._default(turn)
        if turn is None:
            raise CheckpointError("nothing to review: no turn of this session changed the workspace")
        return turn

    def _load(self, turn: int) -> tuple[list[ChangeRow], _Turn, dict[str, Decision]]:
        data = self._turn(turn)
        decisions = self.log.decisions(self.session_id, turn)
        if data.entry is not None and data.entry.undone:
            raise CheckpointError(f"turn {turn} is undone as a whole: redo it first to review its changes")
        rows = self._rows(turn, data, decisions)
        if not rows:
            raise CheckpointError(f"turn {turn} has no changes to review (no checkpoint, or it was dropped)")
        return rows, data, decisions

    def _flip(self, turn: int, only: Iterable[Any] | None, undo: bool) -> Reviewed:
        rows, data, decisions = self._load(turn)
        chosen = select(rows, only)
        # Every row (``only`` None) means those still pending; a kept row is undone only when named.
        wanted = (("pending",) if only is None else ("pending", "kept")) if undo else ("undone",)
        done = Reviewed("undo" if undo else "redo", self.session_id, turn)
        rejected = [r for r in chosen if r.status == "suggested" and undo]  # a suggestion undone: discarded
        picked = [r for r in chosen if r.status in wanted and r.id in dict(data.specs)]
        specs = dict(data.specs)
        for path in sorted({r.path for r in picked}):
            here = {r.id: specs[r.id] for r in picked if r.path == path}
            undone = {i: specs[i] for i, d in decisions.items() if d.status == "undone" and i in specs
                      and specs[i].path == path}
            try:
                refused, changed = self._flip_file(path, data.sides[path], here, undone, undo)
            except (ToolError, CheckpointError, OSError) as exc:
                refused, changed = {i: str(exc) for i in here}, False
            done.refused += sorted(refused.items())
            done.done += [i for i in here if i not in refused]
            if changed:
                done.files.append(path)
        status = "undone" if undo else None
        action = self.log.next_action(self.session_id) if undo else 0
        flipped = [(r.id, r.path) for r in picked if r.id in done.done]
        self.log.mark(self.session_id, turn, flipped, status, action)
        if rejected:
            self.log.mark(self.session_id, turn, [(r.id, r.path) for r in rejected], "undone", 0)
            done.done += [r.id for r in rejected]
        if done.files:
            self.checkpoints.settle(done.files)
            self.log.set_snapshot(self.session_id, turn, self.checkpoints.store.snapshot())
        return self._finish(done, rows)

    def _finish(self, done: Reviewed, before: list[ChangeRow]) -> Reviewed:
        after = self.changes(done.turn)
        for path in sorted({r.path for r in before}):
            done.pending[path] = sum(1 for r in after if r.path == path and r.status in AWAITING)
        return done

    # ----- writing ---------------------------------------------------------------------------
    def _flip_file(self, path: str, sides: tuple[bytes | None, bytes | None], picked: dict[str, Spec],
                   undone: dict[str, Spec], undo: bool) -> tuple[dict[str, str], bool]:
        """Take back (or re-apply) the picked rows of one file; (refused row -> why, whether it changed)."""
        old, new = notebook_cells(sides[0]), notebook_cells(sides[1])
        if old is not None and new is not None and all(s.cell_id for s in picked.values()):
            return self._flip_notebook(path, old, new, picked, undone, undo)
        return self._flip_text(path, sides, picked, undone, undo)

    def _flip_notebook(self, path: str, old: list[dict], new: list[dict], picked: dict[str, Spec],
                       undone: dict[str, Spec], undo: bool) -> tuple[dict[str, str], bool]:
        store, snap = self._notebook(path)
        hunks: dict[str, set[int]] = {}
        for spec in undone.values():
            if spec.kind == "source" and spec.cell_id and spec.hunk is not None:
                hunks.setdefault(spec.cell_id, set()).add(spec.hunk)
        result = plan(old, new, snap.notebook["cells"], picked, hunks, undo)
        if result.ops:
            store.apply(self.checkpoints.root / path, path, result.ops)
        return result.refused, bool(result.ops)

    def _notebook(self, path: str) -> tuple[Any, Any]:
        """The first notebook store that holds ``path`` (an open notebook's, else the file) and its snapshot."""
        from ..tools.nbfile import FILE_STORE

        stores = self.checkpoints.notebook_stores() if self.checkpoints.notebook_stores else [FILE_STORE]
        full = _inside(self.checkpoints.root, path)
        for store in stores:
            snap = store.read(full, path, allow_missing=False)
            if snap is not None:
                return store, snap
        raise ToolError(f"{path}: no notebook store holds it")

    def _flip_text(self, path: str, sides: tuple[bytes | None, bytes | None], picked: dict[str, Spec],
                   undone: dict[str, Spec], undo: bool) -> tuple[dict[str, str], bool]:
        full = _inside(self.checkpoints.root, path)
        current = _current(full)
        src, dst = (sides[1], sides[0]) if undo else sides
        hunk_rows = {s.hunk: i for i, s in picked.items() if s.hunk is not None}
        if not hunk_rows:  # the whole file: added, deleted, binary or a notebook without cell ids
            if current == dst:
                return {}, False
            if current != src:
                return {i: f"{path} was {CHANGED}" for i in picked}, False
            _write(full, dst)
            return {}, True
        text = current.decode("utf-8") if current is not None else ""
        old, new = (sides[0] or b"").decode("utf-8"), (sides[1] or b"").decode("utf-8")
        done_hunks = {s.hunk for s in undone.values() if s.hunk is not None}
        result, refused = revise(old, new, done_hunks, set(hunk_rows), text, undo)
        if result != text:
            atomic_write(full, result)
        return {hunk_rows[h]: f"{path}: these lines were {CHANGED}" for h in refused}, result != text

    def _apply_suggestion(self, row: ChangeRow, decided: Decision) -> str | None:
        """Write a suggested edit (review before writing); why not, when its cell changed since."""
        ops = (decided.data or {}).get("ops") or []
        try:
            store, _ = self._notebook(row.path)
            store.apply(self.checkpoints.root / row.path, row.path, ops)
        except (ToolError, CheckpointError, OSError) as exc:
            return str(exc)
        return None


def _current(path: Path) -> bytes | None:
    """The file's bytes now (None: absent); a link or a special file is refused, never followed."""
    try:
        return read_bytes(path)[0]
    except FileNotFoundError:
        return None


def _write(path: Path, data: bytes | None) -> None:
    if data is None:
        path.unlink(missing_ok=True)
    else:
        atomic_write(path, data)


def _row(row_id: str, session: str, turn: int, spec: Spec, status: str) -> ChangeRow:
    return ChangeRow(id=row_id, session=session, turn=turn, path=spec.path, cell_id=spec.cell_id,
                     kind=spec.kind, hunk=spec.hunk, before=spec.before, after=spec.after,
                     start_before=spec.start_before, start_after=spec.start_after, status=status)  # type: ignore[arg-type]


def _spec_of(data: dict[str, Any]) -> Spec:
    return Spec(path=data.get("path", ""), kind=data.get("kind", "source"), cell_id=data.get("cell_id"),
                hunk=data.get("hunk"), before=data.get("before", ""), after=data.get("after", ""),
                start_before=data.get("start_before", 1), start_after=data.get("start_after", 1))


def select(rows: list[ChangeRow], only: Iterable[Any] | None) -> list[ChangeRow]:
    """The rows ``only`` names (rows, row ids, paths or cell ids); all of them for None. A name that
    matches no row is refused: a typo must not pass for "nothing to do"."""
    if only is None:
        return list(rows)
    names = [x.id if isinstance(x, ChangeRow) else str(x) for x in ([only] if isinstance(only, (str, ChangeRow))
                                                                   else only)]
    picked = []
    for name in names:
        matched = [r for r in rows if name in (r.id, r.path, r.cell_id)]
        if not matched:
            raise CheckpointError(f"no change of turn {rows[0].turn} is {name!r}: give a row id, a path or a cell "
                                  "id from agent.changes()")
        picked += [r for r in matched if r not in picked]
    return picked


def matching(rows: Iterable[ChangeRow], path: str | None = None, cell: str | None = None) -> list[str]:
    """The ids of the rows of ``path`` and/or cell ``cell`` (``/undo --path P --cell ID``, ``nbagent undo``)."""
    picked = [r.id for r in rows if (path is None or r.path == path) and (cell is None or r.cell_id == cell)]
    if not picked:
        where = " ".join(x for x in (f"path {path}" if path else "", f"cell {cell}" if cell else "") if x)
        raise CheckpointError(f"no change of the turn at {where}")
    return picked
