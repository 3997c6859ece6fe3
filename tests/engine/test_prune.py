"""Wire pruning and its two repairs: the offending histories, and requests that stay valid."""

from __future__ import annotations

from nbagent.model.chat import to_chat_message
from nbagent.model.responses import to_input_items
from nbagent.engine.compaction import prune, repair


def assert_valid_chat(messages):
    """What providers enforce: every tool message answers a call made before it."""
    calls = set()
    for m in map(to_chat_message, messages):
        for c in m.get("tool_calls") or ():
            calls.add(c["id"])
        if m["role"] == "tool":
            assert m["tool_call_id"] in calls, f"tool result {m['tool_call_id']} has no call"


def assert_valid_responses(messages):
    """Responses: outputs need their call; a function_call item with an id needs its reasoning item."""
    items = to_input_items(messages)
    calls, reasoning = set(), set()
    for item in items:
        if item.get("type") == "reasoning":
            reasoning.add(item["id"])
        if item.get("type") == "function_call":
            calls.add(item["call_id"])
            assert item.get("id") is None or any(m.get("reasoning_items") for m in messages)
        if item.get("type") == "function_call_output":
            assert item["call_id"] in calls
    for m in messages:
        for c in m.get("tool_calls") or ():
            if c.get("reasoning_id"):
                assert c["reasoning_id"] in {r["id"] for r in m.get("reasoning_items") or ()}


def step(i, reasoning_item=False):
    call = {"id": f"call_{i}", "name": "read_file", "arguments": '{"path": "a"}'}
    assistant = {"role": "assistant", "content": "", "tool_calls": [call]}
    if reasoning_item:
        rid = f"rs_{i}"
        assistant["reasoning_items"] = [{"type": "reasoning", "id": rid, "summary": [],
                                         "encrypted_content": "x" * 50}]
        call["item_id"], call["reasoning_id"] = f"fc_{i}", rid
    result = {"role": "tool", "tool_call_id": f"call_{i}", "name": "read_file", "content": "y" * 400,
              "is_error": False}
    return [assistant, result]


def test_repair_one_drops_a_result_whose_call_was_pruned():
    history = [{"role": "user", "content": "go"}, *step(1), *step(2)]
    cut = history[2:]  # a count-based cut that lands between call_1 and its result
    repaired = repair(cut)
    assert all(m.get("tool_call_id") != "call_1" for m in repaired)
    assert_valid_chat(repaired)


def test_repair_keeps_a_call_still_awaiting_its_result():
    history = [{"role": "user", "content": "go"}, step(1)[0]]
    assert repair(history) == history


def test_repair_two_drops_a_responses_item_whose_reasoning_was_dropped():
    assistant, result = step(1, reasoning_item=True)
    stripped = {**assistant, "reasoning_items": []}
    repaired = repair([{"role": "user", "content": "go"}, stripped, result])
    assert repaired == [{"role": "user", "content": "go"}]
    assert_valid_responses(repaired)


def test_prune_fits_the_budget_and_stays_valid_for_both_apis():
    history = [{"role": "user", "content": "start"}]
    for i in range(200):
        history += step(i, reasoning_item=i % 2 == 0)
        history.append({"role": "assistant", "content": f"note {i}"})
    pruned = prune(history, budget_tokens=4000)
    assert len(pruned) < len(history)
    assert sum(len(m.get("content") or "") for m in pruned) // 4 < 4000
    assert_valid_chat(pruned)
    assert_valid_responses(pruned)
    assert pruned[-1] == history[-1]
    assert history[1]["tool_calls"]  # the stored history is untouched
