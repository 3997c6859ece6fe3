"""A session's checkpoint manifest: which turns have a before/after snapshot, newest 20 kept.

One JSON file per session under ``.nbagent/checkpoints/sessions/``, written
atomically. Entries are in turn order; the undone ones (redo-able) are always
a suffix, because a new checkpoint drops them.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

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
    def __init__(self, directory: Path, session_id: str, kind: str):
        self.path = directory / f"{ref_safe(session_id)}.json"
        self.session_id = session_id
        self.kind = kind
        self.entries: list[TurnCheckpoint] = self._load()

    def _load(self) -> list[TurnCheckpoint]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            return []  # a damaged manifest: undo starts afresh rather than acting on garbage
        if data.get("kind") != self.kind:
            return []  # the workspace became (or stopped being) a repository: old ids mean nothing
        return [TurnCheckpoint(**e) for e in data.get("entries", [])]

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"version": 1, "session": self.session_id, "kind": self.kind,
                "entries": [asdict(e) for e in self.entries]}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

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
