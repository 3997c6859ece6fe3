from nbagent.evals.checks import output_text, run_notebook


def test_it_runs_top_to_bottom():
    assert "max: 3.25" in output_text(run_notebook("measure.ipynb"))
