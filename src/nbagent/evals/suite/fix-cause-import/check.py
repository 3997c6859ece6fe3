from nbagent.evals.checks import cell, names, notebook, original_notebook, outputs, run_notebook


def test_the_import_is_added_at_the_top_and_the_cell_kept():
    nb = notebook("geometry.ipynb")
    assert "math" in names(cell(nb, "imports").source), "math is not imported in the imports cell"
    assert cell(nb, "hyp").source == cell(original_notebook("geometry.ipynb"), "hyp").source
    ran = run_notebook("geometry.ipynb")
    assert "hypotenuse: 5.0" in outputs(cell(ran, "hyp"))


def test_the_error_is_explained():
    nb = notebook("geometry.ipynb")
    ids = [c.get("id") for c in nb.cells]
    later = nb.cells[ids.index("hyp") + 1:]
    assert any(c.cell_type == "markdown" and "math" in c.source for c in later), "no explanation after the cell"
