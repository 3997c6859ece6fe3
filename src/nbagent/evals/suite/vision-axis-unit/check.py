import re
from pathlib import Path

from nbagent.evals.checks import answer, original


def test_the_answer_reads_the_chart_and_nothing_changed():
    assert Path("plot.png").read_bytes() == original("plot.png").read_bytes(), "plot.png changed"
    text = answer()
    assert re.search(r"kelvin|\(K\)|\bK\b", text, re.I), "the answer does not say kelvin"
