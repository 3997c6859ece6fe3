"""The turn's guard: checkpoints around a turn's changes and the recovery journal around each change.

The loop tells it when a turn begins and ends and when a step is durable; the
tool runner tells it before and after each call of a tool that may change
something (its approval policy is not "never"). It takes the turn's "before"
snapshot at the first such call, the "after" one at the turn's end, journals
every such call, and emits ``checkpoint`` events. On resume it reports what a
crash left unrecorded and which files changed since the last checkpoint.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

from .. import events as ev
from . import DEFAULT_MAX_BYTES, CheckpointError, Checkpoints, Restored
from ..render.redaction import logger
from ..render.escape import first_of
from ..workspace.state_dir import CHECKPOINTS, JOURNAL, find_state_file, location
from .journal import RecoveryJournal, path_argument
from .kernel_ledger import BUDGET_SECONDS, KernelConflict, KernelLedger, KernelRecord, KernelRestore
from .remote_ledger import RemoteLedger

KERNEL_TOOLS = frozenset({"kernel_run", "notebook_run"})
"""The calls that run code in the user's kernel: their change to its namespace is recorded."""

log = logger("nbagent.checkpoints")


def mutates(tool: Any) -> bool:
    """A tool that may change something: its own approval policy (not a config override) is not "never"."""
    policy = getattr(tool, "approval", None)
    if isinstance(policy, str):
        return policy != "never"
    return not getattr(tool, "read_only", False)


class TurnGuard:
    def __init__(self, workspace: Any, session_id: str, emit: Callable[[ev.AnyEvent], None], *,
                 enabled: bool = True, journal: bool = True, max_bytes: int = DEFAULT_MAX_BYTES,
                 kernel: Any = None, kernel_max_bytes: int | None = None,
                 kernel_budget_seconds: float = BUDGET_SECONDS, remote_kernels: RemoteLedger | None = None):
        self.emit = emit
        self.kernel: KernelLedger | RemoteLedger | None = (
            KernelLedger(kernel, max_bytes=kernel_max_bytes, budget_seconds=kernel_budget_seconds,
                         execution_count=getattr(kernel, "execution_count", None))
            if kernel is not None else remote_kernels)
        """The record of what kernel_run and notebook_run did to the live namespace: kept here when the
        agent runs in the kernel, else in the kernels its notebook_run reached (``remote_kernels``)."""
        self._kernel_before: dict[str, Any] = {}
        root = workspace.root
        self.off_reason = "checkpoints are switched off (AgentConfig.checkpoints)"
        try:
            state_dir = workspace.state_dir  # made with the .gitignore that keeps it out of git
        except OSError as exc:  # a read-only workspace: the agent still works, without either
            log.warning("no checkpoints or journal: %s", exc)
            state_dir, enabled, journal = location(root), False, False
            self.off_reason = f"this workspace has no checkpoints ({exc})"
        self.enabled = enabled
        self.checkpoints = Checkpoints(root, state_dir, session_id, max_bytes=max_bytes)
        self.journal = RecoveryJournal(state_dir, session_id, root, enabled=journal)
        try:
            self.journal.create()
        except OSError as exc:
            log.warning("no recovery journal: %s", exc)
            self.journal.enabled = False
        self._turn_id = ""
        self._turn = 0
        self._reported_error = False
        self._notebooks: set[str] = set()
        self._journaled: set[str] = set()
        """Calls with a pending line whose step is not durable yet (read-only calls have no lines)."""

    # ----- the turn ----------------------------------------------------------------------
    def begin_turn(self, turn: int, turn_id: str) -> None:
        self._turn, self._turn_id, self._reported_error = turn, turn_id, False
        if isinstance(self.kernel, RemoteLedger):  # the kernels record there, under this turn
            self.kernel.begin_turn(turn, turn_id)
        if self.enabled:
            self.checkpoints.begin_turn(turn, turn_id)

    async def before_call(self, tool: Any, call_id: str, arguments: dict[str, Any]) -> None:
        if not mutates(tool):
            return
        if isinstance(self.kernel, KernelLedger) and getattr(tool, "name", "") in KERNEL_TOOLS:
            self._kernel_before[call_id] = await asyncio.to_thread(self.kernel.before)
        if self.enabled:
            if self.checkpoints.awaiting_before:
                await asyncio.to_thread(self._settle_first, arguments)
            await asyncio.to_thread(self.checkpoints.before_change)
            self._report_error()
        self.journal.pending(call_id, tool.name, self._turn, arguments)
        self._journaled.add(call_id)

    def after_call(self, tool: Any, call_id: str, arguments: dict[str, Any], status: str) -> None:
        before = self._kernel_before.pop(call_id, None)
        if before is not None and isinstance(self.kernel, KernelLedger):
            self._record_kernel(before, call_id)  # a failed run may have changed names before it failed
        if mutates(tool):
            path = self.journal.relative(path_argument(arguments))
            self.journal.ended(call_id, status == "done", path)
            if path and path.endswith(".ipynb"):
                self._notebooks.add(path)

    def _record_kernel(self, before: Any, call_id: str) -> None:
        assert isinstance(self.kernel, KernelLedger)
        try:
            record, dropped = self.kernel.after(before, self._turn, self._turn_id, call_id)
        except Exception as exc:  # the namespace kept changing, an odd object: the call itself stands
            log.warning("could not record the kernel's change: %s", exc)
            return
        if record is not None:
            self.emit(ev.KernelChanged(call_id=call_id, added=record.added, rebound=record.rebound,
                                       deleted=record.deleted, mutated=record.mutated, unchecked=record.unchecked,
                                       dropped=dropped, turn_id=self._turn_id))

    def step_durable(self, messages: list[dict[str, Any]]) -> None:
        ids = [m["tool_call_id"] for m in messages if m.get("role") == "tool"
               and m.get("tool_call_id") in self._journaled]
        if ids:
            self.journal.finalize(ids)
            self._journaled.difference_update(ids)

    def end_turn(self) -> None:
        # Synchronous on purpose: it runs while an aborted turn unwinds, where an await could be cut.
        if not self.enabled:
            return
        self._settle_notebooks()
        entry = self.checkpoints.end_turn()
        self._report_error()
        kernel_changed = self.kernel is not None and any(r.changed for r in self.kernel.of_turn(self._turn))
        if entry is not None or kernel_changed:
            self._end_redo(files_too=entry is None)
        if entry is not None:
            self._emit_state("taken", entry.turn, entry.files, entry.turn_id)
        elif kernel_changed:
            self._emit_state("taken", self._turn, [], self._turn_id)  # the kernel only: undo still applies

    def _end_redo(self, files_too: bool) -> None:
        """A turn that changed something ends redo for the turns undone before it, files and kernel alike
        (a new file checkpoint already dropped the undone file entries)."""
        if self.kernel is not None:
            self.kernel.forget_undone()
        if files_too:
            try:
                self.checkpoints.end_redo()
            except (CheckpointError, OSError) as exc:
                log.warning("could not drop the undone checkpoints: %s", exc)

    def _settle_first(self, arguments: dict[str, Any]) -> None:
        """Before the "before" snapshot: wait for the room to save what the user just ran or typed in
        the open notebook the first call changes, or undo would take back the user's outputs as the turn's."""
        path = self.journal.relative(path_argument(arguments))
        if path and path.endswith(".ipynb"):
            try:
                self.checkpoints.settle([path])
            except Exception as exc:  # a server gone or a tab closed: the snapshot takes the file as it is
                log.warning("could not wait for an open notebook to be saved: %s", exc)

    def _settle_notebooks(self) -> None:
        """An open notebook the turn edited reaches its file when the room saves: wait for that, so the
        "after" snapshot holds the turn's notebook edits."""
        paths, self._notebooks = sorted(self._notebooks), set()
        try:
            self.checkpoints.settle(paths)
        except Exception as exc:  # a server gone or a tab closed: the snapshot takes the file as it is
            log.warning("could not wait for open notebooks to be saved: %s", exc)

    def _report_error(self) -> None:
        if self.checkpoints.error and not self._reported_error:
            self._reported_error = True
            self.emit(ev.Error(message=f"no checkpoint for this turn: {self.checkpoints.error}",
                               kind="checkpoint", turn_id=self._turn_id))

    # ----- undo and redo -----------------------------------------------------------------
    def undo(self, force: bool = False, turn: int | None = None) -> Restored:
        restored = self._move("undo", force, turn)
        self._emit_restored(restored, "undone")
        return restored

    def redo(self, force: bool = False, turn: int | None = None) -> Restored:
        restored = self._move("redo", force, turn)
        self._emit_restored(restored, "redone")
        return restored

    def _move(self, action: str, force: bool, turn: int | None) -> Restored:
        """Undo or redo one turn: its files (the checkpoints) and its kernel names (the ledger), together.

        The turn is the newest not undone (undo) or the oldest undone (redo) of either; the kernel's
        conflicts are checked before any file is touched, so a refusal restores nothing.
        """
        if action == "undo" and self.enabled:
            self.checkpoints.adopt()
        file_turn, kernel_turn = self._targets(action)
        candidates = [t for t in (file_turn, kernel_turn) if t is not None]
        if not candidates:
            if not self.enabled:  # no usable state directory: say so, never reach for its files
                raise CheckpointError(f"nothing to {action}: {self.off_reason}")
            move = self.checkpoints.undo if action == "undo" else self.checkpoints.redo
            return move(force, turn)  # says why there is nothing to do
        target = max(candidates) if action == "undo" else min(candidates)
        if turn is not None and turn != target:
            raise CheckpointError(f"cannot {action} turn {turn} now: {action} goes one turn at a time and turn "
                                  f"{target} comes first")
        ledger = self.kernel if kernel_turn == target else None
        if ledger is not None:
            names = ledger.conflicts(action, target)
            if names and not force:
                raise KernelConflict(action, target, names)
        if file_turn == target:
            move = self.checkpoints.undo if action == "undo" else self.checkpoints.redo
            restored = move(force, target)
        else:
            restored = Restored(action, target, [])
        if ledger is not None:
            done = ledger.undo(target, force) if action == "undo" else ledger.redo(target, force)
            self._kernel_restored(restored, done, ledger.of_turn(target))
        return restored

    def _kernel_restored(self, restored: Restored, done: KernelRestore, records: list[KernelRecord]) -> None:
        restored.names, restored.not_restored = done.restored, done.not_restored
        if done.not_restored and restored.action == "undo" and self.kernel is not None:
            from .replay import replay_plan

            if isinstance(self.kernel, RemoteLedger):  # the kernel plans it, from its history and notebook
                restored.replay = self.kernel.plan(restored.turn)
            else:
                restored.replay = replay_plan(self.kernel.source, done.execution_count)

    def replay(self, cells: list[Any] | None = None) -> Any:
        """Restart and replay in the kernels of an agent outside them (``RemoteLedger``): the plan the last
        undo offered (or ``cells``) run there on the user's word; a ``kernel_replayed`` event says how far
        it got. Returns a ReplayOutcome."""
        if not isinstance(self.kernel, RemoteLedger) or self.kernel.offer is None:
            raise CheckpointError("nothing to replay: restart and replay is offered after an undo that could not "
                                  "restore every kernel variable")
        turn = self.kernel.offer.turn
        outcome = self.kernel.replay(cells)
        turn_id = self._turn_id_of(turn)
        self.emit(ev.KernelReplayed(turn=turn, ran=list(outcome.ran), failed=outcome.failed,
                                    failed_cell_id=outcome.failed_cell_id, error=outcome.error, turn_id=turn_id))
        return outcome

    def _targets(self, action: str) -> tuple[int | None, int | None]:
        files = self.checkpoints.preview(action) if self.enabled else None
        kernel = None
        if self.kernel is not None:
            kernel = self.kernel.undo_target() if action == "undo" else self.kernel.redo_target()
        return (files[0] if files else None), kernel

    def _emit_restored(self, restored: Restored, action: ev.CheckpointAction) -> None:
        entry = self.checkpoints.manifest.find(restored.turn) if self.enabled else None
        self._emit_state(action, restored.turn, entry.files if entry else restored.files,
                         self._turn_id_of(restored.turn), restored)

    def _turn_id_of(self, turn: int) -> str:
        """The id of session turn ``turn``: from its checkpoint, else from its kernel records."""
        entry = self.checkpoints.manifest.find(turn) if self.enabled else None
        turn_id = entry.turn_id if entry else ""
        if not turn_id and self.kernel is not None:
            turn_id = next((r.turn_id for r in self.kernel.of_turn(turn)), "")
        return turn_id

    # ----- the review of a turn's rows (nbagent.checkpoints.review) -------------------------------
    def attach_review(self, log: Any) -> None:
        """Review this session's turns with the database's ``log`` (a ReviewLog); a whole-turn undo then
        starts from where a partial undo left the turn."""
        from .review import Review

        self.review = Review(self.checkpoints, log)
        self.checkpoints.reviewed = lambda turn: log.snapshot(self.checkpoints.session_id, turn)

    review: Any = None

    def review_rows(self, action: str, turn: int | None, only: Any = None) -> Any:
        """Keep, undo or redo rows of a turn (``action``: "keep", "undo", "redo"); returns a Reviewed.
        An undo or redo is a ``checkpoint`` event with the rows; every path gets a ``changes`` event."""
        if not self.enabled or self.review is None:
            raise CheckpointError(f"nothing to review: {self.off_reason}")
        done = getattr(self.review, action)(turn, only)
        turn_id = self._turn_id_of(done.turn)
        if action != "keep" and done.done:
            self._emit_state("undone" if action == "undo" else "redone", done.turn, done.files, turn_id,
                             rows=done.done)
        for path, pending in done.pending.items():
            self.emit(ev.ChangesReviewed(session=done.session, turn=done.turn, path=path, pending=pending,
                                         turn_id=turn_id))
        return done

    def _emit_state(self, action: ev.CheckpointAction, turn: int, files: list[str], turn_id: str,
                    restored: Restored | None = None, rows: list[str] | None = None) -> None:
        undo = [t for t in self._targets("undo") if t is not None]
        redo = [t for t in self._targets("redo") if t is not None]
        self.emit(ev.Checkpoint(action=action, turn=turn, files=list(files),
                                undo_turn=max(undo) if undo else None, redo_turn=min(redo) if redo else None,
                                names=list(restored.names) if restored else [],
                                not_restored=list(restored.not_restored) if restored else [],
                                replay=[plan_entry(c) for c in restored.replay] if restored else [],
                                rows=list(rows or []), turn_id=turn_id))

    # ----- resume ------------------------------------------------------------------------
    def recover(self) -> tuple[str, list[str]]:
        """(note for the model, files diverged from the last checkpoint) after a resume."""
        entries = self.journal.unresolved()
        note = self.journal.recovery_note(entries)
        if entries:
            self.journal.finalize([e.call_id for e in entries])  # told once, not at every resume
        diverged: list[str] = []
        if self.enabled:
            try:
                self.checkpoints.adopt()  # a turn cut by the crash: its changes are its checkpoint's
                diverged = self.checkpoints.diverged()
            except (CheckpointError, OSError) as exc:
                log.warning("could not compare the workspace with the last checkpoint: %s", exc)
        return note, diverged


def plan_entry(cell: Any) -> dict[str, Any]:
    """A restart-and-replay cell as the ``checkpoint`` event carries it: where it is, how long it took, and
    the first line of its code (the plan shows that; the whole code stays with the agent)."""
    code = str(cell.code).strip()
    line = code.splitlines()[0][:200] if code else ""
    return {"execution_count": cell.execution_count, "cell_id": cell.cell_id, "seconds": cell.seconds,
            "origin": cell.origin, "line": line}


def undo_note(restored: Restored) -> str:
    """The history note that keeps the model from assuming its undone (or redone) edits."""
    files = first_of(restored.files, 30)
    kernel = ""
    if restored.names:
        kernel = f" Kernel variables {'restored' if restored.action == 'undo' else 'bound again'}: " + \
            ", ".join(restored.names[:30]) + "."
    if restored.not_restored:
        kernel += " Not restored: " + "; ".join(restored.not_restored[:30]) + "."
    if restored.action == "undo":
        what = f"the files it changed ({files}) are back as they were before that turn" if files else \
            "its changes are taken back"
        return f"[nbagent] The user undid turn {restored.turn}: {what}. Its edits are no longer in the workspace.{kernel}"
    what = f"its changes to {files} are in the workspace again" if files else "its changes are back"
    return f"[nbagent] The user redid turn {restored.turn}: {what}.{kernel}"


def review_note(done: Any) -> str:
    """The history note after a partial undo or redo (a Reviewed): which of its changes are (not) there."""
    verb = "undid" if done.action == "undo" else "redid"
    where = first_of(done.files, 30) or "no file needed changing"
    state = "are no longer in the workspace" if done.action == "undo" else "are in the workspace again"
    return (f"[nbagent] The user {verb} part of turn {done.turn} (changes {', '.join(done.done[:30])}; files: "
            f"{where}): those edits {state}; the turn's other changes stay. Read the files before editing them.")


def diverged_note(files: list[str]) -> str:
    shown = first_of(files, 30)
    return (f"[nbagent] Since this session's last checkpoint, these files changed outside the session: "
            f"{shown}. Read them before relying on what the conversation says about them.")


def forget_sessions(root: Path, session_ids: list[str]) -> None:
    """Remove the journals and checkpoints of sessions the store deleted (``SessionStore.delete``/``purge``
    leave the files to their caller: the store knows rows, not the checkpoints above it)."""
    for session_id in session_ids:
        forget_session(root, session_id)


def forget_session(root: Path, session_id: str) -> None:
    """Remove a deleted session's journal, checkpoint manifest and refs (sessions delete and purge)."""
    try:
        if find_state_file(root, JOURNAL) is None and find_state_file(root, CHECKPOINTS) is None:
            return
        state_dir = location(root)
        RecoveryJournal(state_dir, session_id, root).delete()
        if find_state_file(root, CHECKPOINTS) is not None:
            Checkpoints(root, state_dir, session_id).delete()
    except (CheckpointError, OSError) as exc:  # a link or someone else's folder is refused, not followed
        log.warning("could not remove the checkpoints of session %s: %s", session_id, exc)
