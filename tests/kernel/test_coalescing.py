"""A fast stream costs a bounded number of frontend messages, and nothing is lost."""

from __future__ import annotations

import time

from nbagent import events as ev
from nbagent.jupyter.widgets.coalesce import coalesce
from nbagent.jupyter.widgets.turn import TurnView

T = "turn_1"


def test_coalesce_merges_runs_and_keeps_order():
    batch = [(1.0, ev.ReasoningDelta(text="a", turn_id=T)), (1.1, ev.ReasoningDelta(text="b", turn_id=T)),
             (1.2, ev.TextDelta(text="c", turn_id=T)), (1.3, ev.TextDelta(text="d", turn_id=T)),
             (1.4, ev.ToolInputDelta(text="{}", turn_id=T)), (1.5, ev.ToolCall(name="x", turn_id=T)),
             (1.6, ev.TextDelta(text="e", turn_id=T))]
    out = coalesce(batch)
    assert [(type(e).__name__, getattr(e, "text", None), at) for at, e in out] == [
        ("ReasoningDelta", "ab", 1.0), ("TextDelta", "cd", 1.2), ("ToolCall", None, 1.5), ("TextDelta", "e", 1.6)]


def test_a_fast_stream_sends_at_most_about_thirty_messages_a_second(recorded):
    view = TurnView(turn_id=T)
    recorded.clear()  # the comm_open messages of the widgets themselves
    pieces = [f"word{i} " for i in range(6000)]
    start = time.monotonic()
    for i, piece in enumerate(pieces):
        view.handle(ev.TextDelta(text=piece, turn_id=T))
        if i % 50 == 0:
            time.sleep(0.01)  # a stream spread over about 1.2 s, as a fast model sends it
    view.handle(ev.TurnEnd(reason="done", turn_id=T))
    elapsed = time.monotonic() - start
    assert view.answer.markdown == "".join(pieces)  # nothing lost
    updates = [m for m in recorded if m["msg_type"] == "comm_msg"]
    assert elapsed > 1.0
    assert len(updates) / elapsed <= 30, f"{len(updates)} messages in {elapsed:.2f} s"
    assert view.flushes >= 5  # it did stream, not only flush at the end
