from nbagent.evals.checks import code_sources, notebook, original_notebook, unchanged_except


def test_only_the_signature_cell_is_gone():
    nb = notebook("shipments.ipynb")
    assert "sign" not in [c.get("id") for c in nb.cells] and not any("checked by" in s for s in code_sources(nb))
    unchanged_except(nb, original_notebook("shipments.ipynb"), changed=["sign"])
    assert len(nb.cells) == 4
