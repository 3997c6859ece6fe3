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
from .manifest import ref_safe
from .journal import RecoveryJournal, path_argument

log = logger("nbagent.checkpoints")


def mutates(tool: Any) -> bool:
    """A tool that may change something: its own approval policy (not a config override) is not "never"."""
    policy = getattr(tool, "approval", None)
    if isinstance(policy, str):
        return policy != "never"
    return not getattr(tool, "read_only", False)


class TurnGuard:
    def __init__(self, workspace: Any, session_id: str, emit: Callable[[ev.Event], None], *,
                 enabled: bool = True, journal: bool = True, max_bytes: int = DEFAULT_MAX_BYTES):
        self.emit = emit
        root = workspace.root
        try:
            state_dir = workspace.state_dir  # made with the .gitignore that keeps it out of git
        except OSError as exc:  # a read-only workspace: the agent still works, without either
            log.warning("no checkpoints or journal: cannot create %s/.nbagent (%s)", root, exc)
            state_dir, enabled, journal = root / ".nbagent", False, False
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
        if self.enabled:
            self.checkpoints.begin_turn(turn, turn_id)

    async def before_call(self, tool: Any, call_id: str, arguments: dict[str, Any]) -> None:
        if not mutates(tool):
            return
        if self.enabled:
            await asyncio.to_thread(self.checkpoints.before_change)
            self._report_error()
        self.journal.pending(call_id, tool.name, self._turn, arguments)
        self._journaled.add(call_id)

    def after_call(self, tool: Any, call_id: str, arguments: dict[str, Any], status: str) -> None:
        if mutates(tool):
            path = self.journal.relative(path_argument(arguments))
            self.journal.ended(call_id, status == "done", path)
            if path and path.endswith(".ipynb"):
                self._notebooks.add(path)

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
        if entry is not None:
            self._emit_state("taken", entry.turn, entry.files, entry.turn_id)

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
        restored = self.checkpoints.undo(force, turn)
        self._emit_restored(restored, "undone")
        return restored

    def redo(self, force: bool = False, turn: int | None = None) -> Restored:
        restored = self.checkpoints.redo(force, turn)
        self._emit_restored(restored, "redone")
        return restored

    def _emit_restored(self, restored: Restored, action: str) -> None:
        entry = self.checkpoints.manifest.find(restored.turn)
        self._emit_state(action, restored.turn, entry.files if entry else restored.files,
                         entry.turn_id if entry else "")

    def _emit_state(self, action: str, turn: int, files: list[str], turn_id: str) -> None:
        undo = self.checkpoints.preview("undo")
        redo = self.checkpoints.preview("redo")
        self.emit(ev.Checkpoint(action=action, turn=turn, files=list(files),
                                undo_turn=undo[0] if undo else None, redo_turn=redo[0] if redo else None,
                                turn_id=turn_id))

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


def undo_note(restored: Restored) -> str:
    """The history note that keeps the model from assuming its undone (or redone) edits."""
    files = ", ".join(restored.files[:30]) + (" ..." if len(restored.files) > 30 else "")
    if restored.action == "undo":
        return (f"[nbagent] The user undid turn {restored.turn}: the files it changed ({files}) are back "
                "as they were before that turn. Its edits are no longer in the workspace.")
    return (f"[nbagent] The user redid turn {restored.turn}: its changes to {files} are in the "
            "workspace again.")


def diverged_note(files: list[str]) -> str:
    shown = ", ".join(files[:30]) + (" ..." if len(files) > 30 else "")
    return (f"[nbagent] Since this session's last checkpoint, these files changed outside the session: "
            f"{shown}. Read them before relying on what the conversation says about them.")


def forget_session(root: Path, session_id: str) -> None:
    """Remove a deleted session's journal, checkpoint manifest and refs (sessions delete and purge)."""
    state_dir = root / ".nbagent"
    if not state_dir.is_dir():
        return
    (state_dir / "journal" / f"{ref_safe(session_id)}.jsonl").unlink(missing_ok=True)
    if (state_dir / "checkpoints").is_dir():
        try:
            Checkpoints(root, state_dir, session_id).delete()
        except (CheckpointError, OSError) as exc:
            log.warning("could not remove the checkpoints of session %s: %s", session_id, exc)
