"""A fast stream costs a bounded number of frontend messages, and nothing is lost."""

from __future__ import annotations

import time

from nbagent import events as ev
from nbagent.jupyter.widgets.turn import TurnView

T = "turn_1"


def test_a_fast_stream_sends_at_most_about_thirty_messages_a_second(recorded):
    view = TurnView(turn_id=T)
    view.handle(ev.TurnStart(prompt="p", turn_id=T))
    view.flush()
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
