"""What the agent's calls did to the live kernel's namespace, kept so that undo and redo can take it back.

Around each kernel-changing call (kernel_run, notebook_run) ``before()`` takes a snapshot of the user's
names (each object's identity and fingerprint, nbagent.checkpoints.fingerprint) and ``after()`` compares:
names added, rebound (another object) and deleted, and objects mutated in place (same object, another
fingerprint); objects that cannot be fingerprinted within the budget are "not checked". The record keeps
references to the objects a call rebound or deleted (and, once undone, to the ones it bound), so undo
binds them again; those references are capped in bytes, the oldest released first, and what was released
is said. ``undo(turn)`` restores a turn's names in reverse call order; a name the user rebound since is
not overwritten unless forced (the same rule as files). Objects mutated in place cannot be put back.

No IPython here: the source is anything with ``namespace`` (the live dict) and ``user_items()`` (the
user's names, as nbagent.tools.kernel.KernelBridge gives them).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from .fingerprint import IMMUTABLE, Budget, fingerprint, held_bytes
from .gitrepo import CheckpointError

KEEP_TURNS = 20
"""Turns whose kernel records are kept (as many as the file checkpoints keep)."""
BUDGET_SECONDS = 0.015
"""Time one snapshot may spend fingerprinting (a call takes two: before and after)."""
DEFAULT_CAP = 2 * 1024 ** 3
ABSENT: Any = object()
"""A name that is not bound."""


class Source(Protocol):
    namespace: dict[str, Any]

    def user_items(self) -> list[tuple[str, Any]]: ...


def default_cap() -> int:
    """A quarter of the free memory or 2 GB, whichever is less."""
    import psutil

    return int(min(psutil.virtual_memory().available * 0.25, DEFAULT_CAP))


@dataclass
class Snapshot:
    values: dict[str, Any]
    prints: dict[str, str | None]
    execution_count: int | None = None


@dataclass
class KernelRecord:
    """One call's change to the namespace."""

    turn: int
    turn_id: str
    call_id: str
    added: list[str] = field(default_factory=list)
    rebound: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    old: dict[str, Any] = field(default_factory=dict, repr=False)
    """The objects rebound or deleted names held before the call (released by the cap)."""
    new_ids: dict[str, int] = field(default_factory=dict, repr=False)
    """The identities of the objects added or rebound names hold after the call: undo checks the user
    left them. Identities, not references: an object the user deletes later is not kept alive."""
    new: dict[str, Any] = field(default_factory=dict, repr=False)
    """Once undone: the objects undo unbound, kept for redo (released by the cap like ``old``)."""
    released_new: list[str] = field(default_factory=list)
    """Names whose ``new`` object the cap released: redo cannot bind them again."""
    dropped: list[str] = field(default_factory=list)
    """Names whose old object the cap released: undo cannot bind them again."""
    unrestored: list[str] = field(default_factory=list)
    """Names the last undo could not put back (redo leaves them as they are)."""
    undone: bool = False
    execution_count: int | None = None
    """The kernel's execution count when the call started (restart-and-replay replays up to it)."""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.rebound or self.deleted or self.mutated)

    def held(self) -> int:
        objects = {id(v): v for v in self.old.values()}
        if self.undone:
            objects.update({id(v): v for v in self.new.values()})
        return sum(held_bytes(v) for v in objects.values())


RECORD_FIELDS = ("turn", "turn_id", "call_id", "added", "rebound", "deleted", "mutated", "unchecked", "dropped",
                 "released_new", "unrestored", "undone", "execution_count")
"""What a record says about itself to a caller in another process (its objects stay in the kernel)."""


def record_dict(record: KernelRecord) -> dict[str, Any]:
    return {k: getattr(record, k) for k in RECORD_FIELDS}


def record_from_dict(data: dict[str, Any]) -> KernelRecord:
    """A record as another process told it: the names, without the objects."""
    return KernelRecord(**{k: data[k] for k in RECORD_FIELDS if k in data})


@dataclass
class KernelRestore:
    """What an undo or redo did to the kernel: names bound again, and what it could not restore."""

    restored: list[str] = field(default_factory=list)
    not_restored: list[str] = field(default_factory=list)
    execution_count: int | None = None


class KernelConflict(CheckpointError):
    """Undo/redo refused: the user rebound these names after the agent's turn (``force=True`` overwrites)."""

    def __init__(self, action: str, turn: int, names: list[str]):
        self.names = names
        super().__init__(f"cannot {action} turn {turn}: you changed these kernel variables since: "
                         f"{', '.join(names)}. Nothing was restored; {action} with force to overwrite them.")


def _cost_order(item: tuple[str, Any]) -> tuple[int, str]:
    """Cheap values first, arrays and frames last: a spent budget leaves only the costly ones unchecked."""
    module = type(item[1]).__module__
    return (1 if module.startswith(("pandas", "numpy")) else 0, item[0])


def _identity(value: Any) -> Any:
    return ABSENT if value is ABSENT else id(value)


class RecordReading:
    """Which turn undo or redo takes next, read from ``records`` (a ledger in this kernel, or the copy
    an agent outside it keeps: nbagent.checkpoints.remote_ledger)."""

    records: list[KernelRecord]

    def of_turn(self, turn: int) -> list[KernelRecord]:
        return [r for r in self.records if r.turn == turn]

    def undo_target(self) -> int | None:
        done = [r.turn for r in self.records if not r.undone and r.changed]
        return max(done) if done else None

    def redo_target(self) -> int | None:
        undone = [r.turn for r in self.records if r.undone]
        return min(undone) if undone else None


class KernelLedger(RecordReading):
    def __init__(self, source: Source, *, max_bytes: int | None = None, budget_seconds: float = BUDGET_SECONDS,
                 execution_count: Any = None):
        self.source = source
        self.max_bytes = default_cap() if max_bytes is None else max_bytes
        self.budget_seconds = budget_seconds
        self.execution_count = execution_count
        """A callable giving the kernel's execution count, when the front end knows it."""
        self.records: list[KernelRecord] = []
        self._lock = threading.Lock()

    # ----- recording ---------------------------------------------------------------------------
    def _items(self) -> list[tuple[str, Any]]:
        """The user's names, without nbagent's own objects (the agent itself changes as it works)."""
        return [(n, v) for n, v in self.source.user_items() if not type(v).__module__.startswith("nbagent.")]

    def before(self) -> Snapshot:
        items = self._items()
        budget = Budget(self.budget_seconds)
        count = self.execution_count() if self.execution_count is not None else None
        prints = {name: fingerprint(value, budget) for name, value in sorted(items, key=_cost_order)}
        return Snapshot(dict(items), prints, count)

    def after(self, snap: Snapshot, turn: int, turn_id: str, call_id: str) -> tuple[KernelRecord | None, list[str]]:
        """The call's record (None when it changed nothing it could see), and what the cap released."""
        record = self._compare(snap, dict(self._items()), turn, turn_id, call_id)
        if not (record.changed or record.unchecked):
            return None, []
        with self._lock:
            # A call that changed nothing seen does not end redo.
            self._forget_undone_and_old(turn, undone=record.changed)
            self.records.append(record)
            return record, self._enforce_cap()

    def _compare(self, snap: Snapshot, now: dict[str, Any], turn: int, turn_id: str, call_id: str) -> KernelRecord:
        record = KernelRecord(turn, turn_id, call_id, execution_count=snap.execution_count)
        budget = Budget(self.budget_seconds)
        for name, value in sorted(now.items(), key=_cost_order):
            if name not in snap.values:
                record.added.append(name)
                record.new_ids[name] = id(value)
            elif snap.values[name] is not value:
                record.rebound.append(name)
                record.old[name], record.new_ids[name] = snap.values[name], id(value)
            else:
                was = snap.prints[name]
                if was == IMMUTABLE:
                    continue
                print_now = fingerprint(value, budget) if was is not None else None
                if was is None or print_now is None:
                    record.unchecked.append(name)
                elif print_now != was:
                    record.mutated.append(name)
        for name in sorted(set(snap.values) - set(now)):
            record.deleted.append(name)
            record.old[name] = snap.values[name]
        for names in (record.added, record.rebound, record.mutated, record.unchecked):
            names.sort()
        return record

    def forget_undone(self) -> None:
        """Redo is over for the undone turns (a later turn changed something): release their objects."""
        with self._lock:
            self.records = [r for r in self.records if not r.undone]

    def _forget_undone_and_old(self, turn: int, *, undone: bool) -> None:
        """A new change ends redo (as a new file checkpoint does); only the last KEEP_TURNS turns stay."""
        if undone:
            self.records = [r for r in self.records if not r.undone]
        turns = sorted({r.turn for r in self.records} | {turn})
        if len(turns) > KEEP_TURNS:
            oldest_kept = turns[-KEEP_TURNS]
            self.records = [r for r in self.records if r.turn >= oldest_kept]

    def _enforce_cap(self) -> list[str]:
        """Release the oldest held objects until the records fit the cap; 'name (turn N)' for each."""
        sizes = [r.held() for r in self.records]
        total, dropped = sum(sizes), []
        for index, record in enumerate(self.records):
            if total <= self.max_bytes:
                break
            for name in list(record.old):
                del record.old[name]
                record.dropped.append(name)
                dropped.append(f"{name} (turn {record.turn})")
            for name in list(record.new):
                del record.new[name]
                record.released_new.append(name)
                dropped.append(f"{name} (turn {record.turn}, for redo)")
            total -= sizes[index] - record.held()
        return dropped

    # ----- undo and redo -----------------------------------------------------------------------
    def conflicts(self, action: str, turn: int) -> list[str]:
        """Names of ``turn`` the user rebound since (undo) or since its undo (redo)."""
        records = self.of_turn(turn)
        expected: dict[str, Any] = {}  # name -> the identity it should have now, or ABSENT
        for record in records if action == "undo" else reversed(records):
            for name in record.added + record.rebound + record.deleted:
                if action == "undo":
                    expected[name] = record.new_ids.get(name, ABSENT)
                elif name not in record.unrestored:
                    old = record.old.get(name, ABSENT) if name not in record.added else ABSENT
                    expected[name] = ABSENT if old is ABSENT else id(old)
        ns = self.source.namespace
        return sorted(n for n, want in expected.items() if _identity(ns.get(n, ABSENT)) != want)

    def undo(self, turn: int, force: bool = False) -> KernelRestore:
        with self._lock:
            conflicts = self.conflicts("undo", turn)
            if conflicts and not force:
                raise KernelConflict("undo", turn, conflicts)
            done = KernelRestore()
            records = self.of_turn(turn)
            ns = self.source.namespace
            for record in reversed(records):
                record.unrestored, record.released_new = [], []
                for name in record.added + record.rebound:  # kept for redo: what undo is about to unbind
                    if ns.get(name, ABSENT) is not ABSENT:
                        record.new[name] = ns[name]
                for name in record.added:
                    self._bind(name, ABSENT, done)
                for name in record.rebound + record.deleted:
                    if name in record.dropped:
                        record.unrestored.append(name)
                        done.not_restored.append(f"{name} (its old value was released by the memory cap)")
                    else:
                        self._bind(name, record.old[name], done)
                done.not_restored += [f"{name} (changed in place)" for name in record.mutated]
                record.undone = True
            done.execution_count = records[0].execution_count if records else None
            done.restored = sorted(set(done.restored))
            return done

    def redo(self, turn: int, force: bool = False) -> KernelRestore:
        with self._lock:
            conflicts = self.conflicts("redo", turn)
            if conflicts and not force:
                raise KernelConflict("redo", turn, conflicts)
            done = KernelRestore()
            for record in self.of_turn(turn):
                for name in record.added + record.rebound:
                    if name in record.unrestored:
                        continue
                    if name not in record.new:
                        done.not_restored.append(f"{name} (its value was released by the memory cap)"
                                                 if name in record.released_new else f"{name} (no value to bind)")
                        continue
                    value = record.new[name]
                    record.new_ids[name] = id(value)
                    self._bind(name, value, done)
                for name in record.deleted:
                    if name not in record.unrestored:
                        self._bind(name, ABSENT, done)
                done.not_restored += [f"{name} (changed in place)" for name in record.mutated]
                record.undone, record.unrestored, record.new = False, [], {}
            done.restored = sorted(set(done.restored))
            return done

    def _bind(self, name: str, value: Any, done: KernelRestore) -> None:
        ns = self.source.namespace
        if value is ABSENT:
            ns.pop(name, None)
        else:
            ns[name] = value
        done.restored.append(name)

    def release(self, turn: int | None = None) -> None:
        """Forget every record (the session they belong to is gone), or those of ``turn``."""
        with self._lock:
            self.records = [] if turn is None else [r for r in self.records if r.turn != turn]
