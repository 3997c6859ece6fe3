from nbagent.evals.checks import code_sources, markdown_sources, notebook


def test_the_notebook_loads_the_csv():
    code = "\n".join(code_sources(notebook("questions.ipynb")))
    assert "sales.csv" in code, "no cell reads sales.csv"


def test_the_answer_is_in_a_markdown_cell():
    cells = markdown_sources(notebook("questions.ipynb"))[1:]
    text = "\n".join(cells)
    assert "West" in text, "no markdown cell gives the right answer"
