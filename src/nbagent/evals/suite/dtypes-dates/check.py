from nbagent.evals.checks import run_notebook, notebook, original_notebook, output_text, outputs, cell, code_sources, markdown_sources, unchanged_except, names, images, answer, original


def test_the_column_has_the_right_type_and_values():
    nb = run_notebook("clean.ipynb", then=['print(data["day"].dtype, data["day"].dt.day.tolist())'])
    out = outputs(nb.cells[-1])
    for text in ['datetime64', '[1, 2, 5]']:
        assert text in out, f"expected {text!r} in {out!r}"
