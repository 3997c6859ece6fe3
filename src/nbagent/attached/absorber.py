"""The absorber: before a turn starts, each new, changed, failing or removed source becomes one note.

Order of writes, and why: the notes are appended to the session (durable when ``append`` returns), then
what the session has seen is committed. A crash between the two re-delivers the same notes, with the
same deterministic ids, and a note whose id the history already holds is skipped: delivery is at least
once, and the history holds each note once. Notes go at the tail of the history (never the system
prompt: the cached prefix stays the same), and only between turns, never during one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import events as ev
from .notes import note_id, note_text
from .store import ContextStore, Seen


@dataclass(frozen=True)
class Delivery:
    """One note to deliver and what to record once it is saved."""

    note_id: str
    source: str
    change: ev.ContextChange
    """attached, updated, failing or removed."""
    summary: str
    changes: int
    text: str
    seen: Seen | None = None
    forget: Seen | None = None
    wake: bool = False


def pending(store: ContextStore, session_id: str) -> list[Delivery]:
    """What the session has not been told yet. One query when nothing changed."""
    deliveries: list[Delivery] = []
    shadowed: set[str] = set()
    for row in store.absorb_rows(session_id):
        if row[1] in shadowed:
            continue
        shadowed.add(row[1])
        delivery = _decide(store, session_id, row)
        if delivery is not None:
            deliveries.append(delivery)
    for gone in store.orphans(session_id):
        deliveries.append(_removed(gone))
    return deliveries


def _decide(store: ContextStore, session_id: str, row: tuple) -> Delivery | None:
    (scope, name, kind, spec, why, muted, has_text, revision, serial, summary, error, error_since, wake,
     seen_rev, seen_serial, seen_err) = row
    if muted:
        return None  # nothing recorded: unmuted, the next note counts every change made meanwhile
    common = dict(name=name, kind=kind, spec=spec, why=why, summary=summary)
    if error and error_since is not None and error_since != seen_err:
        nid = note_id(name, "failing", since=error_since)
        seen = Seen(scope, name, seen_rev or "", seen_serial or 0, error_since)
        return Delivery(nid, name, "failing", summary, 0,
                        note_text(nid, "failing", error=error, since=error_since, **common), seen=seen,
                        wake=bool(wake))
    if not has_text or (seen_rev, seen_serial) == (revision, serial):
        return None  # the serial counts too: A, B, A is two changes, not none
    change: ev.ContextChange = "attached" if seen_rev is None else "updated"
    changes = serial - (seen_serial or 0) if change == "updated" else 0
    nid = note_id(name, change, serial=serial, revision=revision)
    text = _text_of(store, session_id, name) if kind == "kernel" else None
    body = note_text(nid, change, changes=changes, text=text, **common)
    return Delivery(nid, name, change, summary, changes, body, seen=Seen(scope, name, revision, serial, seen_err),
                    wake=bool(wake))


def _text_of(store: ContextStore, session_id: str, name: str) -> str | None:
    source = store.get(name, session_id)
    return source.snapshot.text if source is not None and source.snapshot is not None else None


def _removed(gone: Seen) -> Delivery:
    nid = note_id(gone.name, "removed", serial=gone.serial, revision=gone.revision)
    body = note_text(nid, "removed", name=gone.name, kind="context", spec="", why="", summary="")
    return Delivery(nid, gone.name, "removed", "", 0, body, forget=gone)


def note_ids_in(messages: list[dict[str, Any]]) -> set[str]:
    return {m["note_id"] for m in messages if m.get("role") == "system" and m.get("note_id")}


def absorb(store: ContextStore, session, emit: Callable[[ev.AnyEvent], None], turn_id: str = "") -> list[Delivery]:
    """Deliver pending notes into ``session`` (append, then commit what was seen); returns those added."""
    deliveries = pending(store, session.id)
    if not deliveries:
        return []
    have = note_ids_in(session.message_heads())  # notes are never left in the store: no read
    fresh = [d for d in deliveries if d.note_id not in have]
    if fresh:
        session.append([{"role": "system", "content": d.text, "note_id": d.note_id, "source": d.source}
                        for d in fresh])
    store.commit_seen(session.id, [d.seen for d in deliveries if d.seen is not None],
                      [d.forget for d in deliveries if d.forget is not None])
    for d in fresh:
        emit(ev.ContextNote(source=d.source, note_id=d.note_id, change=d.change, summary=d.summary,
                            changes=d.changes, text=d.text, session_id=session.id, turn_id=turn_id))
    return fresh
