"""Folding a burst of events into fewer, equivalent ones before they touch any widget."""

from __future__ import annotations

from dataclasses import replace

from ... import events as ev

Stamped = tuple[float, ev.Event]


def coalesce(batch: list[Stamped]) -> list[Stamped]:
    """Merge runs of text or reasoning deltas of one turn; drop argument deltas (no widget shows them).

    Order between different kinds of events is kept, so "reasoning, text, tool" still renders in that
    order; the merged delta carries the time of its first part (thinking time is measured from it).
    """
    out: list[Stamped] = []
    for at, event in batch:
        if isinstance(event, ev.ToolInputDelta):
            continue
        if out and isinstance(event, (ev.TextDelta, ev.ReasoningDelta)):
            last_at, last = out[-1]
            if type(last) is type(event) and last.turn_id == event.turn_id:
                out[-1] = (last_at, replace(last, text=last.text + event.text))
                continue
        out.append((at, event))
    return out
