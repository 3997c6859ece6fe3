from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original


def test_it_prints_the_count():
    nb = run_notebook("inventory.ipynb")
    assert "Items: 3" in outputs(cell(nb, "count"))
