from nbagent.evals.checks import cell, outputs, run_notebook


def test_it_prints_the_count():
    nb = run_notebook("inventory.ipynb")
    assert "Items: 3" in outputs(cell(nb, "count"))
