from nbagent.evals.checks import code_sources, names, notebook, output_text, run_notebook


def test_df_is_renamed_everywhere():
    nb = notebook("orders.ipynb")
    for source in code_sources(nb):
        assert "df" not in names(source), "df is still used"
    assert all("orders" in names(s) for s in code_sources(nb)), "a cell does not use orders"


def test_it_still_runs():
    assert "sum: 34.0" in output_text(run_notebook("orders.ipynb"))
