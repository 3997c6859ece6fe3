from nbagent.evals.checks import notebook, original_notebook, output_text, run_notebook, unchanged_except


def test_the_notebook_runs_and_prints_the_total():
    nb = run_notebook("report.ipynb")
    assert "Total: 60" in output_text(nb)


def test_only_the_failing_cell_changed():
    unchanged_except(notebook("report.ipynb"), original_notebook("report.ipynb"), changed=["show"])
