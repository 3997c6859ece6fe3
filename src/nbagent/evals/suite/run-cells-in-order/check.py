from nbagent.evals.checks import output_text, run_notebook


def test_it_runs_top_to_bottom():
    assert "mean: 18.0" in output_text(run_notebook("pipeline.ipynb"))
