from nbagent.evals.checks import notebook, original_notebook, output_text, run_notebook, unchanged_except


def test_the_average_price_is_printed():
    nb = run_notebook("prices.ipynb")
    assert "average price: 13.0" in output_text(nb)


def test_the_data_is_as_it_was():
    unchanged_except(notebook("prices.ipynb"), original_notebook("prices.ipynb"), changed=["avg"])
