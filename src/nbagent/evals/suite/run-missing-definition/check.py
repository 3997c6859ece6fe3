from nbagent.evals.checks import output_text, run_notebook


def test_it_runs_and_gives_the_same_result():
    assert "high: [0.7, 0.9, 0.55]" in output_text(run_notebook("filter.ipynb"))
