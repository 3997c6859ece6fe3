"""Prompt history per origin, and prices from genai-prices (None when unknown, never a guess)."""

from __future__ import annotations

import pytest

from nbagent.model.cost import cost_of
from nbagent.store.history import PromptHistory


def test_history_is_per_origin_capped_and_skips_a_repeat(store):
    history = PromptHistory(store.db)
    assert history.add("a.ipynb", "first") and not history.add("a.ipynb", "first")
    history.add("a.ipynb", "second")
    history.add("a.ipynb", "first")  # equal to an older one, not the previous: stored
    history.add("b.ipynb", "elsewhere")
    assert not history.add("a.ipynb", "   ")
    assert history.list("a.ipynb") == ["first", "second", "first"]
    assert history.list("b.ipynb") == ["elsewhere"]
    for n in range(250):
        history.add("a.ipynb", f"prompt {n}")
    kept = history.list("a.ipynb")
    assert len(kept) == 200 and kept[0] == "prompt 50" and kept[-1] == "prompt 249"
    assert history.list("b.ipynb") == ["elsewhere"]


def test_known_model_is_priced_from_genai_prices():
    price = cost_of("gpt-4o", "openai", 1_000_000, 0)
    assert price == pytest.approx(2.5)  # gpt-4o input: $2.50 per million tokens
    assert cost_of("gpt-4o", "openai-chat", 1000, 500) == cost_of("gpt-4o", "https://api.openai.com/v1", 1000, 500)


@pytest.mark.parametrize("model, where", [
    ("no-such-model-xyz", "openai"), ("gpt-4o", "http://localhost:8080/v1"), ("gpt-4o", "scripted"),
    ("llama3.2", None), ("", "openai"),
])
def test_unknown_model_or_endpoint_costs_none(model, where):
    assert cost_of(model, where, 1000, 100) is None
