"""DABStep's scoring rule, case by case as the benchmark's scorer decides them."""

from __future__ import annotations

import pytest

from nbagent.evals.public.dabstep_score import question_scorer


@pytest.mark.parametrize("answer, expected", [
    ("NL", "NL"), ("  nl ", "NL"),                       # stripped, lower-cased
    ("1,234.5", "1234.5"), ("$1,234.50", "1234.5"),     # thousands separators and dollars
    ("7.72", "7.722608"),                               # rounded to the fewer decimals of the two
    ("0.12345", "0.1234"),                              # below 1: within 1e-4
    ("138236", "138236"), ("The answer is 42", "42"),   # the first number of each
    ("B, A, C", "A, B, C"), ("[a; b]", "b, a"),          # lists: sorted, item by item
    ("GlobalCard", "globalcard"), ("Crossfit Hanna!", "crossfit hanna"),
    ("NexPay", "the card scheme NexPay"),               # one word: a subset of the other's words
])
def test_answers_the_rule_accepts(answer, expected):
    assert question_scorer(answer, expected)


@pytest.mark.parametrize("answer, expected", [
    ("ES", "NL"), ("59", "60"), ("7.8", "7.722608"), ("0.2", "0.1"),
    ("A, B", "A, B, C"), ("A, D, C", "A, B, C"), ("", "NL"), (None, "NL"),
    ("the most frequent country", "the least frequent country"),
    ("Crossfit Hanna", "Crossfit_Hanna"),  # an underscore is a word character: not the same name to the rule
])
def test_answers_the_rule_refuses(answer, expected):
    assert not question_scorer(answer, expected)
