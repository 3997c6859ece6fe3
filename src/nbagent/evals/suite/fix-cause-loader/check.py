from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original


def test_the_last_cell_is_unchanged_and_works():
    nb = notebook("expenses.ipynb")
    assert cell(nb, "spent").source == cell(original_notebook("expenses.ipynb"), "spent").source
    ran = run_notebook("expenses.ipynb")
    assert "spent: 80.0" in outputs(cell(ran, "spent"))
    assert "(4, 3)" in outputs(cell(ran, "shape"))
