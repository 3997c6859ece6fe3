from nbagent.evals.checks import code_sources, names, notebook, output_text, run_notebook


def test_t_is_renamed_and_strings_kept():
    sources = code_sources(notebook("weather.ipynb"))
    assert all("t" not in names(s) for s in sources), "t is still used"
    assert "temperature_c" in names(sources[0])
    assert '"t values:"' in sources[1], "the text of a string was changed"


def test_it_still_runs():
    out = output_text(run_notebook("weather.ipynb"))
    assert "t values: 3" in out and "warmest: 15.5" in out
