import ast

from nbagent.evals.checks import code_sources, notebook, output_text, run_notebook


def test_one_function_loads_the_files():
    code = "\n".join(code_sources(notebook("load.ipynb")))
    tree = ast.parse(code)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "load_clean" for n in ast.walk(tree)), "no load_clean()"
    assert code.count("dropna") == 1, "the copies are still there"


def test_the_row_counts_are_the_same():
    assert "rows: 2 3 1" in output_text(run_notebook("load.ipynb"))
