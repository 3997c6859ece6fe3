from nbagent.evals.checks import cell, notebook, original_notebook, unchanged_except


def test_only_the_filter_cell_changed():
    nb = notebook("shipments.ipynb")
    unchanged_except(nb, original_notebook("shipments.ipynb"), changed=["filter"])
    assert "10" in cell(nb, "filter").source and "> 5" not in cell(nb, "filter").source
