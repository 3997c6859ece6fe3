"""Checkpoints of one session: a snapshot before a turn's first change and after its last; undo, redo.

The loop calls ``begin_turn``, then ``before_change`` before each mutating
tool call (only the first one of a turn takes the snapshot), then ``end_turn``.
A turn whose snapshots are equal leaves no checkpoint. ``undo``/``redo`` move
the workspace between a turn's two snapshots, touching only the paths the turn
changed, and refuse when one of them was changed by someone else since.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ..render.escape import first_of
from ..workspace.state_dir import CHECKPOINTS, private_dir
from .copystore import CopyStore
from .gitrepo import CheckpointError, GitRepo
from .gitstore import GitStore
from .manifest import Manifest, TurnCheckpoint, ref_safe
from .model import Change, Entry
from .notebooks import same_notebook, settle
from .restore import apply

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""Checkpoint copy cap outside a git repository (AgentConfig.checkpoint_max_bytes)."""


class CheckpointConflict(CheckpointError):
    """Undo/redo refused: these paths changed after the checkpoint (``force=True`` overwrites them)."""

    def __init__(self, action: str, turn: int, paths: list[str]):
        self.paths = paths
        shown = first_of(paths, 20)
        super().__init__(f"cannot {action} turn {turn}: changed since its checkpoint by someone else: {shown}. "
                         f"Nothing was restored; {action} with force to overwrite them.")


class Store(Protocol):
    kind: str

    def snapshot(self) -> str: ...
    def changes(self, old: str, new: str) -> dict[str, Change]: ...
    def read(self, entries: list[Entry]) -> dict[str, bytes]: ...
    def pin(self, ref: str, snapshot: str) -> None: ...
    def unpin(self, ref: str) -> None: ...
    def unpin_all(self, session_id: str) -> None: ...


@dataclass
class Restored:
    """What an undo or redo did."""

    action: str
    turn: int
    files: list[str]
    names: list[str] = field(default_factory=list)
    """Kernel variables bound again (or removed) as they were (nbagent.checkpoints.kernel_ledger)."""
    not_restored: list[str] = field(default_factory=list)
    """Kernel variables that could not be restored, each with why (changed in place, released)."""
    replay: list[Any] = field(default_factory=list)
    """When some could not: the cells restart-and-replay would run (nbagent.checkpoints.replay.ReplayCell)."""


class Checkpoints:
    def __init__(self, root: Path, state_dir: Path, session_id: str, *, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root = root
        self.state_dir = state_dir
        self.session_id = session_id
        self.max_bytes = max_bytes
        self._store: Store | None = None
        self._manifest: Manifest | None = None
        self._turn: tuple[int, str] | None = None
        self._before: str | None = None
        self.error: str | None = None
        """Why this turn has no checkpoint (a snapshot failed or the copy cap was hit)."""
        self.notebook_stores: Callable[[], list[Any]] | None = None
        """The notebook stores to ask (nbagent.tools.nbstores.stores): an open notebook is restored
        through its live document. None: every notebook is restored as a file."""
        self.reviewed: Callable[[int], str | None] | None = None
        """The workspace's snapshot after a turn's last partial undo or redo (nbagent.checkpoints.review),
        or None: a whole-turn undo starts from there rather than from the turn's "after"."""

    @property
    def store(self) -> Store:
        if self._store is None:
            repo = GitRepo.find(self.root, self.state_dir)
            self._store = GitStore(repo, self.root) if repo else CopyStore(self.root, self.state_dir,
                                                                            self.max_bytes)
        return self._store

    @property
    def manifest(self) -> Manifest:
        if self._manifest is None:
            self._manifest = Manifest(self.state_dir, self.session_id, self.store.kind)
        return self._manifest

    # ----- the turn hook ---------------------------------------------------------------
    def begin_turn(self, turn: int, turn_id: str) -> None:
        self._turn, self._before, self.error = (turn, turn_id), None, None

    @property
    def awaiting_before(self) -> bool:
        """Whether the turn's "before" snapshot is still to be taken (by the next ``before_change``)."""
        return self._turn is not None and self._before is None and self.error is None

    def before_change(self) -> bool:
        """Snapshot before the turn's first change; True when this call took it.

        The snapshot is pinned and written to the manifest at once (an unfinished entry), so a
        process killed during the turn still leaves a checkpoint to undo to (see ``adopt``).
        """
        if self._turn is None or self._before is not None or self.error is not None:
            return False
        try:
            before = self.store.snapshot()
            entry = TurnCheckpoint(turn=self._turn[0], turn_id=self._turn[1], time=time.time(), before=before,
                                   after="")
            self.store.pin(entry.ref("before", self.session_id), before)
            self._drop(self.manifest.add(entry))
            self.manifest.save()
        except (CheckpointError, OSError) as exc:
            self.error = _why(exc)
            return False
        self._before = before
        return True

    def end_turn(self) -> TurnCheckpoint | None:
        """Snapshot after the turn's last change; the checkpoint, or None when nothing changed."""
        turn, before = self._turn, self._before
        self._turn, self._before = None, None
        if turn is None or before is None:
            return None
        entry = self.manifest.find(turn[0])
        if entry is None or entry.after:
            return None  # the manifest was replaced meanwhile (another process): nothing to finish
        try:
            return self._finish(entry)
        except (CheckpointError, OSError) as exc:
            self.error = _why(exc)
            return None

    def adopt(self) -> TurnCheckpoint | None:
        """Finish the entry of a turn cut by a crash: its "after" is the workspace as found now."""
        entries = self.manifest.entries
        if not entries or entries[-1].after:
            return None
        return self._finish(entries[-1])

    def _finish(self, entry: TurnCheckpoint) -> TurnCheckpoint | None:
        after = self.store.snapshot()
        files = sorted(self.store.changes(entry.before, after))
        if not files:  # nothing changed after all: no checkpoint
            self.manifest.entries.remove(entry)
            self.store.unpin(entry.ref("before", self.session_id))
            self.manifest.save()
            return None
        entry.after, entry.files, entry.time = after, files, time.time()
        self.store.pin(entry.ref("after", self.session_id), after)
        self.manifest.save()
        return entry

    def end_redo(self) -> None:
        """A later turn changed something else (the kernel): the undone turns can no longer be redone."""
        if self._manifest is None and not (self.state_dir / "checkpoints").is_dir():
            return  # no checkpoint was ever taken: nothing to drop (and no store to open)
        undone = [e for e in self.manifest.entries if e.undone]
        if undone:
            self.manifest.entries = [e for e in self.manifest.entries if not e.undone]
            self._drop(undone)
            self.manifest.save()

    def _drop(self, dropped: list[TurnCheckpoint]) -> None:
        for old in dropped:
            self.store.unpin(old.ref("before", self.session_id))
            self.store.unpin(old.ref("after", self.session_id))

    # ----- undo and redo ----------------------------------------------------------------
    def undo(self, force: bool = False, turn: int | None = None) -> Restored:
        """Undo the newest turn not undone yet; ``turn`` (a button on that turn) must be that one."""
        self.adopt()
        entry = self.manifest.undo_target()
        if entry is None:
            raise CheckpointError("nothing to undo: no turn of this session changed the workspace "
                                  "(or its checkpoints were dropped)")
        _check_turn("undo", turn, entry)
        files = self._move(entry, self.left(entry), entry.before, "undo", force)
        entry.undone = True
        self.manifest.save()
        return Restored("undo", entry.turn, files)

    def redo(self, force: bool = False, turn: int | None = None) -> Restored:
        entry = self.manifest.redo_target()
        if entry is None:
            raise CheckpointError("nothing to redo: no undone turn")
        _check_turn("redo", turn, entry)
        files = self._move(entry, entry.before, self.left(entry), "redo", force)
        entry.undone = False
        self.manifest.save()
        return Restored("redo", entry.turn, files)

    def left(self, entry: TurnCheckpoint) -> str:
        """The snapshot the turn left: its "after", or where its review's partial undos left it."""
        # The state directory first: a link planted there since the turn is refused before the review's
        # records (the database in it) are even read.
        private_dir(self.state_dir, CHECKPOINTS)
        reviewed = self.reviewed(entry.turn) if self.reviewed is not None else None
        return reviewed or entry.after

    def _move(self, entry: TurnCheckpoint, expected: str, target: str, action: str, force: bool) -> list[str]:
        # Only the turn's own files: a review's snapshot holds whatever else changed in the workspace by then.
        files = set(entry.files)
        turn_changes = {p: c for p, c in self.store.changes(expected, target).items() if p in files}
        current = self.store.snapshot()
        drifted = self.store.changes(expected, current)
        conflicts = self._real_conflicts(sorted(p for p in turn_changes if p in drifted), drifted)
        if conflicts and not force:
            raise CheckpointConflict(action, entry.turn, conflicts)
        targets = {path: new for path, (_, new) in turn_changes.items()}
        left = {p: old for p, (old, _) in turn_changes.items() if old is not None and p.endswith(".ipynb")}
        blobs = self.store.read([e for e in targets.values() if e is not None] + list(left.values()))
        # Forced: the open notebooks become the checkpoint's cells, whatever was typed since.
        bases = {} if force else {p: blobs[e.oid] for p, e in left.items()}
        return apply(self.root, targets, blobs, self._live_writer(bases))

    def _real_conflicts(self, paths: list[str], drifted: dict[str, Change]) -> list[str]:
        """Drop notebooks whose cells are still the checkpoint's: an open notebook's room saves the
        same cells in its own formatting, which is no change by someone else."""
        pairs = {p: (old, new) for p in paths if p.endswith(".ipynb")
                 for old, new in [drifted[p]] if old is not None and new is not None}
        if not pairs:
            return paths
        blobs = self.store.read([e for pair in pairs.values() for e in pair])
        same = {p for p, (old, new) in pairs.items() if same_notebook(blobs[old.oid], blobs[new.oid])}
        return [p for p in paths if p not in same]

    def settle(self, paths: list[str]) -> None:
        """Wait until the open notebooks among ``paths`` are saved, their outputs included (before a
        snapshot is taken)."""
        if self.notebook_stores is None:
            return
        stores = self.notebook_stores()
        for rel in paths:
            if rel.endswith(".ipynb"):
                settle(stores, self.root / rel, rel, outputs=True)

    def _live_writer(self, left: dict[str, bytes]):
        """Restores open notebooks through their stores; ``left``: each notebook as the turn left it."""
        if self.notebook_stores is None:
            return None
        from .notebooks import restore_live

        stores = self.notebook_stores
        return lambda rel, path, data, exists: restore_live(stores(), path, rel, data, exists, left.get(rel))

    def preview(self, action: str) -> tuple[int, list[str]] | None:
        """(turn, files) that ``undo`` or ``redo`` would change now, or None when there is none."""
        entry = self.manifest.undo_target() if action == "undo" else self.manifest.redo_target()
        return (entry.turn, list(entry.files)) if entry else None

    # ----- reading -----------------------------------------------------------------------
    def list(self) -> list[TurnCheckpoint]:
        """The finished checkpoints, oldest first (a running turn's entry is not one yet)."""
        return [e for e in self.manifest.entries if e.after]

    def diff(self, turn: int) -> str:
        """The unified diff of the files ``turn`` changed (binary files named, not shown)."""
        entry = self.manifest.find(turn)
        if entry is None or not entry.after:
            kept = ", ".join(str(e.turn) for e in self.list()) or "none"
            raise CheckpointError(f"turn {turn} has no checkpoint (turns with one: {kept})")
        changes = self.store.changes(entry.before, entry.after)
        blobs = self.store.read([e for pair in changes.values() for e in pair if e is not None])
        return "".join(_file_diff(path, old, new, blobs) for path, (old, new) in sorted(changes.items()))

    def diverged(self) -> list[str]:
        """Paths that differ from the state the newest checkpoint left (what a resume reports)."""
        entries = self.list()
        if not entries:
            return []
        last = entries[-1]
        expected = last.before if last.undone else self.left(last)
        return sorted(self.store.changes(expected, self.store.snapshot()))

    def delete(self) -> None:
        """Forget this session's checkpoints (its refs and manifest)."""
        self.store.unpin_all(ref_safe(self.session_id))
        self.manifest.delete()
        self._manifest = None


def _check_turn(action: str, turn: int | None, entry: TurnCheckpoint) -> None:
    if turn is not None and turn != entry.turn:
        order = "later" if action == "undo" else "earlier"
        raise CheckpointError(f"cannot {action} turn {turn} now: {action} goes one turn at a time and turn "
                              f"{entry.turn} comes first ({order} turns before this one)")


def _file_diff(path: str, old: Entry | None, new: Entry | None, blobs: dict[str, bytes]) -> str:
    a = blobs.get(old.oid, b"") if old else b""
    b = blobs.get(new.oid, b"") if new else b""
    if b"\0" in a[:8000] or b"\0" in b[:8000]:
        return f"Binary file {path} changed\n"
    try:
        a_text, b_text = a.decode("utf-8"), b.decode("utf-8")
    except UnicodeDecodeError:
        return f"Binary file {path} changed\n"
    lines = difflib.unified_diff(a_text.splitlines(keepends=True), b_text.splitlines(keepends=True),
                                 "/dev/null" if old is None else f"a/{path}",
                                 "/dev/null" if new is None else f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _why(exc: Exception) -> str:
    """Why a snapshot failed, in words: a repository with no git to read it is the common case."""
    if isinstance(exc, FileNotFoundError) and exc.filename == "git":
        return "git is not installed here (no `git` on PATH), so this repository's files cannot be snapshotted"
    return str(exc)
