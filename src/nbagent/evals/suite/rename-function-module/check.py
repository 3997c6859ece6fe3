from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original
from pathlib import Path


def test_the_function_is_renamed_in_both_places():
    module = names(Path("units.py").read_text())
    assert "to_fahrenheit" in module and "conv" not in module
    for source in code_sources(notebook("convert.ipynb")):
        assert "conv" not in names(source)


def test_the_notebook_runs():
    assert "boiling: 212.0" in output_text(run_notebook("convert.ipynb"))
