from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original


def test_the_notebook_runs_and_prints_the_total():
    nb = run_notebook("report.ipynb")
    assert "Total: 60" in output_text(nb)


def test_only_the_failing_cell_changed():
    unchanged_except(notebook("report.ipynb"), original_notebook("report.ipynb"), changed=["show"])
