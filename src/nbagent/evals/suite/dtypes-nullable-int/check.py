from nbagent.evals.checks import outputs, run_notebook


def test_the_column_has_the_right_type_and_values():
    nb = run_notebook("clean.ipynb", then=['print(data["count"].dtype, data["count"].tolist())'])
    out = outputs(nb.cells[-1])
    for text in ['Int64', '[3, <NA>, 7]']:
        assert text in out, f"expected {text!r} in {out!r}"
