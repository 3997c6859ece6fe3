"""A batch task's follow-up prompts: one session, a turn each, the row's figures added up from them."""

from __future__ import annotations

from nbagent.batching.task import _totals


def turn(reason: str, steps: int, cost: float | None, error: str | None = None) -> dict:
    return {"text": f"after {steps}", "reason": reason, "tool_calls": steps - 1, "steps": steps,
            "input_tokens": 100 * steps, "output_tokens": 10 * steps, "cached_tokens": 50 * steps, "cost": cost,
            "session_id": "s1", "error": error, "seconds": 1.0}


def test_one_turn_is_its_own_row():
    only = turn("done", 2, 0.5)
    assert _totals([only]) == only and "turns" not in _totals([only])


def test_several_turns_add_up_and_each_keeps_its_own_cost():
    # a Usage event's cost is the session's running total: 0.5 after the first turn, 1.25 after the second
    row = _totals([turn("done", 2, 0.5), turn("done", 3, 1.25), turn("max_steps", 1, 1.5, "too many steps")])
    assert (row["reason"], row["text"]) == ("max_steps", "after 1")  # the last turn's end and answer
    assert (row["steps"], row["tool_calls"], row["input_tokens"], row["cached_tokens"]) == (6, 3, 600, 300)
    assert row["cost"] == 1.5 and row["error"] == "too many steps"
    assert [t["cost"] for t in row["turns"]] == [0.5, 0.75, 0.25]


def test_a_price_unknown_stays_unknown():
    row = _totals([turn("done", 1, None), turn("done", 1, None)])
    assert row["cost"] is None and [t["cost"] for t in row["turns"]] == [None, None]
