from pathlib import Path

from nbagent.evals.checks import code_sources, names, notebook, output_text, run_notebook


def test_the_function_is_renamed_in_both_places():
    module = names(Path("units.py").read_text())
    assert "to_fahrenheit" in module and "conv" not in module
    for source in code_sources(notebook("convert.ipynb")):
        assert "conv" not in names(source)


def test_the_notebook_runs():
    assert "boiling: 212.0" in output_text(run_notebook("convert.ipynb"))
