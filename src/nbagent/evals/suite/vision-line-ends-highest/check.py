import re
from pathlib import Path

from nbagent.evals.checks import answer, original


def test_the_answer_reads_the_chart_and_nothing_changed():
    assert Path("lines.png").read_bytes() == original("lines.png").read_bytes(), "lines.png changed"
    text = answer()
    assert re.search(r"\bgamma\b", text, re.I), "the answer does not say gamma"

