from nbagent.evals.checks import answer_text, code_sources, notebook


def test_the_notebook_loads_the_csv():
    code = "\n".join(code_sources(notebook("questions.ipynb")))
    assert "sales.csv" in code, "no cell reads sales.csv"


def test_the_answer_is_in_a_markdown_cell():
    text = answer_text("questions.ipynb")
    assert "5.4" in text, "no markdown cell gives the right answer"

    assert not ("5.5" in text or "5.3" in text), "the markdown gives a wrong answer too"
