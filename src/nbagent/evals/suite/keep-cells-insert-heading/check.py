from nbagent.evals.checks import notebook, original_notebook, unchanged_except


def test_the_heading_sits_before_the_filter_and_the_rest_is_kept():
    nb = notebook("shipments.ipynb")
    unchanged_except(nb, original_notebook("shipments.ipynb"))
    ids = [c.get("id") for c in nb.cells]
    before = nb.cells[ids.index("filter") - 1]
    assert before.cell_type == "markdown" and before.source.strip().startswith("## Filter"), "no heading before the filter"
    assert len(nb.cells) == 6, "more than one cell was added"
