from nbagent.evals.checks import images, new_code, notebook, original_notebook, run_notebook, unchanged_except


def test_a_new_cell_draws_the_plot():
    nb, before = notebook("analysis.ipynb"), original_notebook("analysis.ipynb")
    unchanged_except(nb, before)
    new = new_code(nb, before)
    assert new, "no new code cell"
    source = "\n".join(new)
    for word in ['sales', 'month']:
        assert word in source, f"the new cell does not use {word!r}"
    ran = run_notebook("analysis.ipynb")
    assert images(ran) >= 1, "running the notebook draws no image"
