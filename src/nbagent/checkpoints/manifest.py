"""A session's checkpoint manifest: which turns have a before/after snapshot, newest 20 kept.

One JSON file per session under ``checkpoints/sessions/`` in the state directory,
written atomically (0600). Entries are in turn order; the undone ones (redo-able) are always
a suffix, because a new checkpoint drops them.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..workspace.atomic import atomic_write
from ..workspace.safe_read import read_bytes
from ..workspace.state_dir import CHECKPOINTS, StateDirRefused, private_dir

KEEP = 20


@dataclass
class TurnCheckpoint:
    turn: int
    turn_id: str
    time: float
    before: str
    after: str
    files: list[str] = field(default_factory=list)
    undone: bool = False
    """after == "": the turn is running (or was cut by a crash before its end): see Checkpoints.adopt."""

    def ref(self, side: str, session_id: str) -> str:
        return f"{ref_safe(session_id)}/turn-{self.turn}/{side}"


class Manifest:
    def __init__(self, state_dir: Path, session_id: str, kind: str):
        self.state_dir = state_dir
        self.path = state_dir / CHECKPOINTS / "sessions" / f"{ref_safe(session_id)}.json"
        self.session_id = session_id
        self.kind = kind
        self.entries: list[TurnCheckpoint] = self._load()

    def _load(self) -> list[TurnCheckpoint]:
        if not os.path.lexists(self.path.parent):
            return []
        try:
            data = json.loads(read_bytes(self._folder() / self.path.name)[0])
            if data.get("kind") != self.kind:
                return []  # the workspace became (or stopped being) a repository: old ids mean nothing
            return [TurnCheckpoint(**e) for e in data.get("entries", [])]
        except StateDirRefused:
            raise
        except (OSError, ValueError, TypeError, AttributeError):
            return []  # missing or damaged: undo starts afresh rather than acting on garbage

    def save(self) -> None:
        data = {"version": 1, "session": self.session_id, "kind": self.kind,
                "entries": [asdict(e) for e in self.entries]}
        atomic_write(self._folder() / self.path.name, json.dumps(data, indent=1), private=True, fsync=False)

    def delete(self) -> None:
        if os.path.lexists(self.path.parent):
            (self._folder() / self.path.name).unlink(missing_ok=True)  # a link is removed, not followed

    def _folder(self) -> Path:
        """The manifests' folder, checked from the state directory down (a link there is refused)."""
        return private_dir(self.state_dir, CHECKPOINTS, "sessions")

    def add(self, entry: TurnCheckpoint) -> list[TurnCheckpoint]:
        """Append ``entry``; returns the entries dropped (undone ones, then the oldest beyond KEEP)."""
        dropped = [e for e in self.entries if e.undone]
        self.entries = [e for e in self.entries if not e.undone] + [entry]
        if len(self.entries) > KEEP:
            dropped += self.entries[:-KEEP]
            self.entries = self.entries[-KEEP:]
        return dropped

    def undo_target(self) -> TurnCheckpoint | None:
        done = [e for e in self.entries if not e.undone and e.after]
        return done[-1] if done else None

    def redo_target(self) -> TurnCheckpoint | None:
        undone = [e for e in self.entries if e.undone]
        return undone[0] if undone else None

    def find(self, turn: int) -> TurnCheckpoint | None:
        return next((e for e in self.entries if e.turn == turn), None)


def ref_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "_"
