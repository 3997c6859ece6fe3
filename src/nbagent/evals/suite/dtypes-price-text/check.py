from nbagent.evals.checks import outputs, run_notebook


def test_the_column_has_the_right_type_and_values():
    nb = run_notebook("clean.ipynb", then=['print(data["price"].dtype, data["price"].tolist())'])
    out = outputs(nb.cells[-1])
    for text in ['float64', '[1200.5, 89.99, 2000.0]']:
        assert text in out, f"expected {text!r} in {out!r}"
