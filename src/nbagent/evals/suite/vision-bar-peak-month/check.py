import re
from pathlib import Path

from nbagent.evals.checks import answer, original


def test_the_answer_reads_the_chart_and_nothing_changed():
    assert Path("chart.png").read_bytes() == original("chart.png").read_bytes(), "chart.png changed"
    text = answer()
    assert re.search(r"\baug(ust)?\b", text, re.I), "the answer does not say August"
