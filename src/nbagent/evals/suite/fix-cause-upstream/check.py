from nbagent.evals.checks import cell, notebook, original_notebook, outputs, run_notebook


def test_the_total_cell_is_untouched_and_now_runs():
    nb = notebook("scores.ipynb")
    assert cell(nb, "total").source == cell(original_notebook("scores.ipynb"), "total").source
    ran = run_notebook("scores.ipynb")
    assert "total: 10" in outputs(cell(ran, "total"))


def test_an_explanation_follows_the_total_cell():
    nb = notebook("scores.ipynb")
    ids = [c.get("id") for c in nb.cells]
    after = nb.cells[ids.index("total") + 1] if ids.index("total") + 1 < len(ids) else None
    assert after is not None and after.cell_type == "markdown", "no markdown cell after the total cell"
    text = after.source.lower()
    assert any(w in text for w in ("str", "string", "text", "type")), "the explanation does not name the cause"
