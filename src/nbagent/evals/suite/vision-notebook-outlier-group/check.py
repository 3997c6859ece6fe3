import re

from nbagent.evals.checks import answer_text, notebook, original_notebook


def test_the_answer_names_group_b():
    text = answer_text("latency.ipynb")
    assert re.search(r"\bB\b", text), "no markdown cell names group B"
    assert not re.search(r"\bgroup A has (the )?outliers", text, re.I), "it says A has the outliers"


def test_the_other_cells_are_unchanged():
    now, before = notebook("latency.ipynb"), original_notebook("latency.ipynb")
    assert [c.source for c in now.cells[:3]] == [c.source for c in before.cells], "a cell of the notebook changed"
