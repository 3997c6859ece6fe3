from nbagent.evals.checks import images, notebook, original_notebook, run_notebook, unchanged_except


def test_a_new_cell_draws_the_plot():
    nb = notebook("analysis.ipynb")
    unchanged_except(nb, original_notebook("analysis.ipynb"))
    new = [c for c in nb.cells if c.cell_type == "code" and c.get("id") != "data"]
    assert new, "no new code cell"
    source = "\n".join(c.source for c in new)
    for word in ['height']:
        assert word in source, f"the new cell does not use {word!r}"
    ran = run_notebook("analysis.ipynb")
    assert images(ran) >= 1, "running the notebook draws no image"
