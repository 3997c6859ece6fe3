"""DABStep's published scoring rule: is the agent's answer the expected one, up to the benchmark's normalisation?

The rule of the benchmark's own scorer (``dabstep_benchmark/evaluation/scorer.py`` in the Hugging Face
space adyen/DABstep, CC-BY-4.0), written again here so that a score from ``nbagent eval dabstep`` means
what a leaderboard score means:

- both sides are stripped and lower-cased;
- when either looks like a number with thousands separators or a decimal (``1,000``, ``12.5``,
  ``$0,99``), the first number of each is compared: equal, or within 1e-4 (relative or absolute)
  when both are below 1, or equal after rounding both to the fewer decimals of the two;
- else a comma or semicolon on either side makes both lists: the items are sorted and compared
  one by one with this same rule;
- else when both hold a number, the numbers are compared as above;
- else strings: equal without punctuation and spaces, or one a subset of the other's words when
  one side is a single word, or a difflib similarity above 0.95.
"""

from __future__ import annotations

import math
import re
from difflib import SequenceMatcher

_SEPARATED = re.compile(r"^\$?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+[.,]\d+)$")
_NUMBER = re.compile(r"(\d*\.\d+|\d+\.?\d*)%?")


def question_scorer(answer: str, expected: str) -> bool:
    """True when ``answer`` counts as ``expected`` under DABStep's rule (see the module docstring)."""
    if answer is None or expected is None:
        return False
    a, b = str(answer).strip().lower(), str(expected).strip().lower()
    if _SEPARATED.match(a) or _SEPARATED.match(b):
        x, y = first_number(a), first_number(b)
        return x is not None and y is not None and same_number(x, y)
    if any(c in a or c in b for c in ",;"):
        return same_list(a, b)
    x, y = first_number(a), first_number(b)
    if x is not None and y is not None:
        return same_number(x, y)
    return same_text(a, b)


def first_number(text: str) -> float | None:
    """The first number in ``text`` once commas and dollar signs are dropped (a percent sign is kept
    as written: the benchmark's answers are in percent, not ratios)."""
    found = _NUMBER.search(text.replace(",", "").replace("$", ""))
    try:
        return float(found.group(1)) if found else None
    except ValueError:
        return None


def same_number(x: float, y: float) -> bool:
    if x == y:
        return True
    if x < 1 and y < 1:
        return math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-4)
    places = min(_decimals(x), _decimals(y))
    return round(x, places) == round(y, places) or math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-4)


def _decimals(x: float) -> int:
    text = str(x)
    return len(text.split(".")[-1]) if "." in text else 0


def same_text(a: str, b: str) -> bool:
    if re.sub(r"[^\w]", "", a) == re.sub(r"[^\w]", "", b):
        return True
    words_a, words_b = re.findall(r"\b\w+\b", a.lower()), re.findall(r"\b\w+\b", b.lower())
    if words_a and words_b and (len(words_a) == 1 or len(words_b) == 1):
        return set(words_a) <= set(words_b) or set(words_b) <= set(words_a)
    return SequenceMatcher(None, a, b).ratio() > 0.95


def same_list(a: str, b: str) -> bool:
    items_a, items_b = sorted(_items(a)), sorted(_items(b))
    if items_a == items_b:
        return True
    return len(items_a) == len(items_b) and all(question_scorer(x, y) for x, y in zip(items_a, items_b))


def _items(text: str) -> list[str]:
    text = re.sub(r"^\[|\]$", "", text.strip())
    return [item.strip() for item in re.split(r"[,;]", text) if item.strip()]
