"""Every session's turns awaiting review, by file: what a notebook's review shows when it opens.

The panel's agents and a kernel's ``%agent`` write their checkpoints to the same state directory and
their review to the same database, so a reader outside them all (the Jupyter server) finds every turn
that changed a file here, without opening any agent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from ..store.reviews import ReviewLog
from ..workspace.safe_read import read_bytes
from ..workspace.state_dir import CHECKPOINTS
from .engine import Checkpoints
from .review import AWAITING, Review


def review_for(root: Path, state_dir: Path, session_id: str, log: ReviewLog,
               notebook_stores: Callable[[], list[Any]] | None = None) -> Review:
    """The review of one session's turns, outside its agent (its checkpoints read from disk)."""
    checkpoints = Checkpoints(root, state_dir, session_id)
    checkpoints.notebook_stores = notebook_stores
    checkpoints.reviewed = lambda turn: log.snapshot(session_id, turn)
    return Review(checkpoints, log)


def session_ids(state_dir: Path) -> list[str]:
    """The sessions with a checkpoint manifest in the state directory."""
    folder = state_dir / CHECKPOINTS / "sessions"
    if not os.path.isdir(folder) or os.path.islink(folder):
        return []
    ids = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        try:
            data = json.loads(read_bytes(folder / name)[0])
        except (OSError, ValueError):
            continue  # damaged or refused: that session has nothing to review
        if isinstance(data, dict) and isinstance(data.get("session"), str):
            ids.append(data["session"])
    return ids


def turns_for_path(root: Path, state_dir: Path, log: ReviewLog, path: str,
                   notebook_stores: Callable[[], list[Any]] | None = None) -> list[dict[str, Any]]:
    """Each session's turns with rows of ``path`` still awaiting review, oldest first: ``{"session",
    "turn", "rows"}`` with every row of that turn for ``path`` (their statuses tell which await)."""
    found: list[tuple[float, dict[str, Any]]] = []
    suggested = set(log.suggested_turns(path))
    for session_id in sorted(set(session_ids(state_dir)) | {s for s, _ in suggested}):
        review = review_for(root, state_dir, session_id, log, notebook_stores)
        entries = {e.turn: e for e in review.checkpoints.list() if not e.undone and path in e.files}
        turns = set(entries) | {t for s, t in suggested if s == session_id}
        for turn in sorted(turns):
            rows = [r for r in review.changes(turn) if r.path == path]
            if any(r.status in AWAITING for r in rows):
                when = entries[turn].time if turn in entries else float("inf")
                found.append((when, {"session": session_id, "turn": turn, "rows": [r.to_dict() for r in rows]}))
    return [turn for _, turn in sorted(found, key=lambda item: item[0])]


def session_turn(review: Review, turn: int | None) -> list[dict[str, Any]]:
    """One session's turn (its newest with changes, or ``turn``) in the listing's shape."""
    rows = review.changes(turn)
    if not rows:
        return []
    return [{"session": review.session_id, "turn": rows[0].turn, "rows": [r.to_dict() for r in rows]}]
