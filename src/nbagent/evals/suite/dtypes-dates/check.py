from nbagent.evals.checks import outputs, run_notebook


def test_the_column_has_the_right_type_and_values():
    nb = run_notebook("clean.ipynb", then=['print(data["day"].dtype, data["day"].dt.day.tolist())'])
    out = outputs(nb.cells[-1])
    for text in ['datetime64', '[1, 2, 5]']:
        assert text in out, f"expected {text!r} in {out!r}"
