import ast

from nbagent.evals.checks import cell, code_sources, notebook, outputs, run_notebook


def test_one_function_does_the_cleaning():
    code = "\n".join(code_sources(notebook("clean.ipynb")))
    tree = ast.parse(code)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "clean_text" for n in ast.walk(tree)), "no clean_text()"
    assert code.count(".str.strip()") <= 1, "the copies are still there"


def test_the_result_is_the_same():
    out = outputs(cell(run_notebook("clean.ipynb"), "show"))
    assert "'name': ['ada', 'grace', 'alan']" in out and "'team': ['red', 'blue', 'green']" in out
    assert "'city': ['london', 'paris', 'rome']" in out
