from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original


def test_only_the_filter_cell_changed():
    nb = notebook("shipments.ipynb")
    unchanged_except(nb, original_notebook("shipments.ipynb"), changed=["filter"])
    assert "10" in cell(nb, "filter").source and "> 5" not in cell(nb, "filter").source
