import re
from pathlib import Path

from nbagent.evals.checks import answer, original


def test_the_answer_reads_the_chart_and_nothing_changed():
    assert Path("scatter.png").read_bytes() == original("scatter.png").read_bytes(), "scatter.png changed"
    text = answer()
    assert re.search(r"(?<![\d.])4(?![\d.])|\bfour\b", text, re.I), "the answer does not say 4"
