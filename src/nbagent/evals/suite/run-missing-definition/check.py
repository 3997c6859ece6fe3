from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original


def test_it_runs_and_gives_the_same_result():
    assert "high: [0.7, 0.9, 0.55]" in output_text(run_notebook("filter.ipynb"))
