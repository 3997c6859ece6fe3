"""The kernel undo record of an agent outside the kernel: the ledger's methods, carried out by lines sent to it.

A server-side agent's notebook_run reaches the notebook's kernel by messages; the record of what it
did to the namespace is kept in that kernel (nbagent.jupyter.kernel.watch, under this agent's
``owner``), because the old objects undo binds again live there. ``RemoteLedger`` gives the turn's
guard (nbagent.checkpoints.turn_guard) the methods it uses on a KernelLedger (of_turn, undo_target,
redo_target, conflicts, undo, redo, forget_undone, release) over the kernel's answers; it keeps a copy
of the records' names (as the kernel last told them), so finding what to undo asks no kernel.

When an undo leaves names not restored, the kernel that could not restore them also plans the
restart-and-replay (its history and its notebook are there: the watcher's ``replay_plan``); the plan is
kept here as the one on offer (``offer``) until the user confirms it (``replay``: the store's
``kernel_replay`` runs it in that kernel), the next turn, a redo or another undo.

The transport is any notebook store with ``kernel_action`` (``KernelLines``): the Jupyter layer's,
which runs the watcher's line in the kernel. No Jupyter import here.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import asdict, dataclass
from typing import Any, Callable, Protocol, runtime_checkable

from .gitrepo import CheckpointError
from .kernel_ledger import KernelConflict, KernelRecord, KernelRestore, RecordReading, record_from_dict
from .replay import ReplayCell, ReplayOutcome


@runtime_checkable
class KernelLines(Protocol):
    def kernel_action(self, kernel_id: str, action: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The watcher's answer to ``action`` in kernel ``kernel_id``; None when this store does not reach it.
        An answer ``{"error": ...}`` says the kernel could not be asked or holds no record; with
        ``"retry": true``, that it cannot be asked now (it runs other code: a line would queue behind it
        and run later, unasked)."""
        ...


@dataclass
class ReplayOffer:
    """The restart-and-replay plan an undo offered: which turn, in which kernel, and its cells."""

    turn: int
    kernel_id: str
    cells: list[ReplayCell]


class RemoteLedger(RecordReading):
    source: Any = None
    """No namespace in this process: the kernel plans restart-and-replay itself (``plan``)."""

    def __init__(self, session_id: str, stores: Callable[[], list[Any]], *, max_bytes: int | None = None,
                 budget_seconds: float | None = None, resumed: bool = False):
        self.owner = session_id
        """The session's records in the kernels. They outlive this agent: an agent opened again on the
        session (the panel's, after its last tab closed) finds them there (``resumed``)."""
        self.stores = stores
        self.max_bytes = max_bytes
        self.budget_seconds = budget_seconds
        self._turn, self._turn_id = 0, ""
        self._kernels: dict[str, list[KernelRecord]] = {}
        """Per kernel id: its records of this owner, as the kernel last told them."""
        self._lock = threading.Lock()
        self._unrestored: list[tuple[str, int | None]] = []
        """The last undo's kernels that left names not restored, with the agent call's execution count."""
        self.offer: ReplayOffer | None = None
        """The restart-and-replay plan on offer (None: none)."""
        self._adopted = not resumed

    # ----- recording (the kernel records; this learns of it) --------------------------------
    def begin_turn(self, turn: int, turn_id: str) -> None:
        self._turn, self._turn_id = turn, turn_id
        self.offer = None  # the kernel moves on: the plan was made for the state before this turn

    def watch_args(self) -> dict[str, Any]:
        """What the watcher's "before" and "after" lines of a call in this turn carry."""
        return {"owner": self.owner, "turn": self._turn, "turn_id": self._turn_id, "max_bytes": self.max_bytes,
                "budget_seconds": self.budget_seconds}

    def recorded(self, kernel_id: str, answer: dict[str, Any]) -> None:
        """A call's "after" answer from ``kernel_id``: its records as they stand now."""
        self._mirror(kernel_id, answer)

    def _mirror(self, kernel_id: str, answer: dict[str, Any]) -> None:
        records = answer.get("records")
        if not isinstance(records, list):
            return
        with self._lock:
            mirrored = [record_from_dict(r) for r in records if isinstance(r, dict)]
            if mirrored:
                self._kernels[kernel_id] = mirrored
            else:
                self._kernels.pop(kernel_id, None)

    # ----- reading -----------------------------------------------------------------------------
    @property
    def records(self) -> list[KernelRecord]:
        self._adopt()
        with self._lock:
            return sorted((r for records in self._kernels.values() for r in records), key=lambda r: r.turn)

    def _kernels_of(self, turn: int) -> list[str]:
        self._adopt()
        with self._lock:
            return [k for k, records in self._kernels.items() if any(r.turn == turn for r in records)]

    def _adopt(self) -> None:
        """Once, for a session opened again: copy the records the kernels still keep for it. Only kernels
        that ran the watcher are asked (``if_loaded``); a busy one is skipped (its turns undo files only).
        Not from the thread of the loop a store runs its lines on (it would wait for itself): later."""
        if self._adopted:
            return
        deferred = False
        for store in self.stores():
            kernel_ids: Callable[[], list[str]] | None = getattr(store, "kernel_ids", None)
            if not isinstance(store, KernelLines) or kernel_ids is None:
                continue
            loop = getattr(store, "loop", None)
            if loop is not None and loop is _running_loop():
                deferred = True
                continue
            try:
                running = [str(k) for k in kernel_ids()]
            except Exception:  # a server shutting down: nothing to find
                continue
            for kernel_id in running:
                self._ask(kernel_id, "targets", {"if_loaded": True})
        self._adopted = not deferred

    # ----- undo and redo -----------------------------------------------------------------------
    def conflicts(self, action: str, turn: int) -> list[str]:
        names: set[str] = set()
        for kernel_id in self._kernels_of(turn):
            answer = self._ask(kernel_id, "conflicts", {"of": action, "turn": turn})
            if answer.get("retry"):  # asked before any file is touched: refuse the whole turn, restore nothing
                raise CheckpointError(f"cannot {action} turn {turn} now: {answer.get('error')}. Nothing was restored.")
            names.update(str(n) for n in answer.get("conflicts") or [])
        return sorted(names)

    def undo(self, turn: int, force: bool = False) -> KernelRestore:
        return self._move("undo", turn, force)

    def redo(self, turn: int, force: bool = False) -> KernelRestore:
        return self._move("redo", turn, force)

    def _move(self, action: str, turn: int, force: bool) -> KernelRestore:
        """Each kernel the turn's calls touched undoes (or redoes) its part; none starts while one refuses."""
        if not force:
            names = self.conflicts(action, turn)
            if names:
                raise KernelConflict(action, turn, names)
        done = KernelRestore()
        self.offer, self._unrestored = None, []
        for kernel_id in self._kernels_of(turn):
            with self._lock:
                mine = [r for r in self._kernels.get(kernel_id, []) if r.turn == turn]
            answer = self._ask(kernel_id, action, {"turn": turn, "force": force})
            if "conflict" in answer:  # the user rebound a name between the check and now
                raise KernelConflict(action, turn, [str(n) for n in answer["conflict"]])
            if "error" in answer:
                why = str(answer["error"])
                done.not_restored += [f"{name} ({why})" for r in mine for name in r.added + r.rebound + r.deleted]
                if answer.get("records") == []:  # restarted or gone: none of its records is left there
                    with self._lock:
                        self._kernels.pop(kernel_id, None)
                continue
            done.restored += [str(n) for n in answer.get("restored") or []]
            done.not_restored += [str(n) for n in answer.get("not_restored") or []]
            if answer.get("not_restored"):
                count = answer.get("execution_count")
                self._unrestored.append((kernel_id, count if isinstance(count, int) else None))
            if done.execution_count is None:
                done.execution_count = answer.get("execution_count")
        done.restored = sorted(set(done.restored))
        return done

    # ----- restart and replay ------------------------------------------------------------------
    def plan(self, turn: int) -> list[ReplayCell]:
        """After an undo of ``turn`` that left names not restored: the kernel's restart-and-replay plan
        (made there, from its history and its notebook), kept as the offer; [] when it has none."""
        if not self._unrestored:
            return []
        kernel_id, upto = self._unrestored[0]  # the first kernel that could not restore (one plan at a time)
        answer = self._ask(kernel_id, "replay_plan", {"upto": upto})
        cells = [_cell(c) for c in answer.get("cells") or [] if isinstance(c, dict)]
        self.offer = ReplayOffer(turn, kernel_id, cells) if cells else None
        return cells

    def replay(self, cells: list[ReplayCell] | None = None) -> ReplayOutcome:
        """Run the plan on offer (or ``cells``, in its kernel) on the user's word: the kernel's variables
        cleared, the cells run in order, stopping at the first error. A busy kernel refuses, running nothing."""
        offer = self.offer
        if offer is None:
            raise CheckpointError("nothing to replay: restart and replay is offered after an undo that could not "
                                  "restore every kernel variable")
        chosen = offer.cells if cells is None else cells
        answer = self._replay_in(offer.kernel_id, [asdict(c) for c in chosen])
        if "error" in answer and "ran" not in answer:
            raise CheckpointError(f"restart and replay did not run: {answer['error']}")
        self.offer = None  # ran (all or up to an error): the kernel is no longer the one the plan was for
        failed = answer.get("failed")
        return ReplayOutcome(ran=[int(n) for n in answer.get("ran") or []],
                             failed=failed if isinstance(failed, int) else None,
                             error=str(answer["error"]) if answer.get("error") else None,
                             failed_cell_id=answer.get("failed_cell_id"))

    def _replay_in(self, kernel_id: str, cells: list[dict[str, Any]]) -> dict[str, Any]:
        for store in self.stores():
            runner = getattr(store, "kernel_replay", None)
            if runner is None:
                continue
            try:
                answer = runner(kernel_id, cells, self.owner)
            except Exception as exc:  # a timeout, a server shutting down: say so, the kernel may still run
                return {"error": f"the kernel did not answer ({type(exc).__name__}: {exc})"}
            if answer is not None:
                return answer
        return {"error": f"kernel {kernel_id} cannot be reached from here"}

    def forget_undone(self) -> None:
        with self._lock:
            kernels = [k for k, records in self._kernels.items() if any(r.undone for r in records)]
        for kernel_id in kernels:
            self._ask(kernel_id, "forget_undone", {})

    def release(self, turn: int | None = None) -> None:
        """Forget this agent's records in every kernel (its session is gone), or those of ``turn``."""
        self.offer = None
        with self._lock:
            kernels = list(self._kernels)
        for kernel_id in kernels:
            self._ask(kernel_id, "release", {"turn": turn})
        if turn is None:
            with self._lock:
                self._kernels.clear()

    def _ask(self, kernel_id: str, action: str, args: dict[str, Any]) -> dict[str, Any]:
        """The kernel's answer (its records copied here); ``{"error": ...}`` when no store reaches it."""
        for store in self.stores():
            if not isinstance(store, KernelLines):
                continue
            try:
                answer = store.kernel_action(kernel_id, action, {**args, "owner": self.owner})
            except Exception as exc:  # a timeout, a server shutting down: the line may still run later
                return {"error": f"the kernel did not answer ({type(exc).__name__}: {exc})", "retry": True}
            if answer is not None:
                if "error" not in answer:  # a refusal says why; the records stay until a move reports them
                    self._mirror(kernel_id, answer)
                return answer
        return {"error": f"kernel {kernel_id} cannot be reached from here"}


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _cell(data: dict[str, Any]) -> ReplayCell:
    """A plan's cell as the kernel's watcher sent it (its types checked: the kernel's answer is data)."""
    count, seconds, cell_id = data.get("execution_count"), data.get("seconds"), data.get("cell_id")
    return ReplayCell(execution_count=count if isinstance(count, int) else 0, code=str(data.get("code") or ""),
                      seconds=float(seconds) if isinstance(seconds, (int, float)) else None,
                      cell_id=cell_id if isinstance(cell_id, str) else None, origin=str(data.get("origin") or ""))
