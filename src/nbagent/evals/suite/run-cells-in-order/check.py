from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original


def test_it_runs_top_to_bottom():
    assert "mean: 18.0" in output_text(run_notebook("pipeline.ipynb"))
