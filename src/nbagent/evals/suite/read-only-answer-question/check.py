import re
from pathlib import Path

from nbagent.evals.checks import answer, original


def test_the_answer_gives_the_count_and_nothing_changed():
    assert Path("measurements.csv").read_text() == original("measurements.csv").read_text()
    assert re.search(r"(?<![\d.])17(?![\d.])", answer()), "the answer does not say 17"
