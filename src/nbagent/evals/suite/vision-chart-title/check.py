import re
from pathlib import Path

from nbagent.evals.checks import answer, original


def test_the_answer_reads_the_chart_and_nothing_changed():
    assert Path("figure.png").read_bytes() == original("figure.png").read_bytes(), "figure.png changed"
    text = answer()
    assert re.search(r"churn by plan,? 2025", text, re.I), "the answer does not say the title 'Churn by plan, 2025'"
