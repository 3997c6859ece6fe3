from nbagent.evals.checks import cell, notebook, original_notebook, outputs, run_notebook


def test_the_last_cell_is_unchanged_and_works():
    nb = notebook("expenses.ipynb")
    assert cell(nb, "spent").source == cell(original_notebook("expenses.ipynb"), "spent").source
    ran = run_notebook("expenses.ipynb")
    assert "spent: 80.0" in outputs(cell(ran, "spent"))
    assert "(4, 3)" in outputs(cell(ran, "shape"))
