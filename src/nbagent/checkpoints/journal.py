"""The recovery journal: every mutation of a session, pending -> committed/failed -> finalized.

One append-only JSON-lines file per session, ``journal/<session>.jsonl`` in the state directory,
created with the session and removed with it. A line is written (and synced)
before a mutating tool call starts (``pending``), when it ends (``committed`` or
``failed``) and when the step holding its result is durable in SQLite
(``finalized``). Lines hold the tool, the call id, the turn, the relative path
and SHA-256 hashes; never file contents, commands or credentials.

After a crash, a call whose newest line is ``committed`` happened but its step
was lost (the model must be told, not repeat it); ``pending`` or ``failed``
means nobody knows how far it got (the model must check before acting again).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..render.redaction import logger
from ..workspace.root import confine, confined
from ..workspace.safe_read import read_bytes
from ..workspace.state_dir import JOURNAL, open_append, private_dir
from .manifest import ref_safe

PATH_ARGUMENTS = ("path", "notebook_path", "file_path")


@dataclass
class JournalEntry:
    call_id: str
    tool: str
    turn: int
    state: str
    path: str | None = None
    before: str | None = None
    after: str | None = None


class RecoveryJournal:
    def __init__(self, state_dir: Path, session_id: str, root: Path, *, enabled: bool = True):
        self.state_dir = state_dir
        self.path = state_dir / JOURNAL / f"{ref_safe(session_id)}.jsonl"
        self.root = root
        self.enabled = enabled
        """Off for sessions kept in memory only: nothing could resume them."""

    def create(self) -> None:
        if not self.enabled:
            return
        os.close(self._open())

    def delete(self) -> None:
        if os.path.lexists(self.path.parent):
            (private_dir(self.state_dir, JOURNAL) / self.path.name).unlink(missing_ok=True)

    def _open(self) -> int:
        """The journal opened for appending, its folder checked from the state directory down."""
        return open_append(private_dir(self.state_dir, JOURNAL) / self.path.name)

    # ----- writing -----------------------------------------------------------------------
    def pending(self, call_id: str, tool: str, turn: int, arguments: dict[str, Any]) -> None:
        if not self.enabled:
            return  # not even the file's hash: reading it is the costly part
        path = self.relative(path_argument(arguments))
        self._write({"call_id": call_id, "tool": tool, "turn": turn, "state": "pending", "path": path,
                     "before": self._hash(path)})

    def ended(self, call_id: str, ok: bool, path: str | None) -> None:
        if not self.enabled:
            return
        self._write({"call_id": call_id, "state": "committed" if ok else "failed", "after": self._hash(path)})

    def finalize(self, call_ids: list[str]) -> None:
        """The step holding these calls is durable: nothing to recover for them."""
        for call_id in call_ids:
            self._write({"call_id": call_id, "state": "finalized"}, sync=False)

    def _write(self, record: dict[str, Any], sync: bool = True) -> None:
        if not self.enabled:
            return
        record["t"] = round(time.time(), 3)
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        fd = self._open()
        try:
            os.write(fd, line)
            if sync:
                os.fsync(fd)  # a pending line must be on disk before the change it announces
        finally:
            os.close(fd)

    def relative(self, path: str | None) -> str | None:
        """The workspace-relative form of a tool's path argument (None when it leaves the workspace)."""
        if not path:
            return None
        target = confined(self.root, path)
        return target.relative_to(self.root).as_posix() if target is not None else None

    def _hash(self, path: str | None) -> str | None:
        if not path:
            return None
        try:
            return "sha256:" + hashlib.sha256(read_bytes(confine(self.root, path))[0]).hexdigest()
        except (OSError, ToolError):  # gone, outside the workspace, not a regular file, too large
            return None

    # ----- reading -----------------------------------------------------------------------
    def unresolved(self) -> list[JournalEntry]:
        """Calls whose newest line is not ``finalized``, in the order they started."""
        calls: dict[str, JournalEntry] = {}
        try:
            if not os.path.lexists(self.path.parent):
                return []
            path = private_dir(self.state_dir, JOURNAL) / self.path.name
            lines = read_bytes(path)[0].decode("utf-8", "replace").splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:  # a link, a FIFO or someone else's folder: nothing trustworthy to recover
            logger("nbagent.checkpoints").warning("the recovery journal is not read: %s", exc)
            return []
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut by the crash itself
            call_id = rec.get("call_id")
            if not isinstance(call_id, str):
                continue
            if rec.get("state") == "pending":
                calls[call_id] = JournalEntry(call_id, str(rec.get("tool", "")), int(rec.get("turn") or 0),
                                              "pending", rec.get("path"), rec.get("before"))
            elif call_id in calls:
                calls[call_id].state = str(rec.get("state"))
                calls[call_id].after = rec.get("after", calls[call_id].after)
        return [e for e in calls.values() if e.state != "finalized"]

    def recovery_note(self, entries: list[JournalEntry]) -> str:
        """What the model must know about calls a crash left unrecorded ("" when none)."""
        done = [e for e in entries if e.state == "committed"]
        unsure = [e for e in entries if e.state != "committed"]
        parts = []
        if done:
            items = "; ".join(_describe(e) for e in done)
            parts.append("Before the previous process stopped, these tool calls completed but their results "
                         f"were lost from the conversation: {items}. Their effects are in place: do not "
                         "repeat them.")
        if unsure:
            items = "; ".join(_describe(e) for e in unsure)
            parts.append(f"These tool calls were interrupted and may or may not have taken effect: {items}. "
                         "Verify the current state (read the files, check the processes) before doing "
                         "anything again; never repeat them blindly.")
        return " ".join(parts)


def path_argument(arguments: dict[str, Any]) -> str | None:
    for key in PATH_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value and "\0" not in value:
            return value
    return None


def _describe(entry: JournalEntry) -> str:
    where = f" on {entry.path}" if entry.path else ""
    return f"{entry.tool}{where} (turn {entry.turn}, call {entry.call_id})"
