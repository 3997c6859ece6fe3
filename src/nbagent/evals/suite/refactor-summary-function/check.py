import ast

from nbagent.evals.checks import code_sources, notebook, output_text, run_notebook


def test_one_function_replaces_the_copies():
    nb = notebook("stats.ipynb")
    code = "\n".join(code_sources(nb))
    tree = ast.parse(code)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "summarise" for n in ast.walk(tree)), "no summarise()"
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "summarise"]
    assert len(calls) >= 1
    assert code.count(".mean()") <= 1, "the repeated code is still there"


def test_the_output_is_the_same():
    out = output_text(run_notebook("stats.ipynb"))
    for line in ("a: 1 2.5 4", "b: 10 25.0 40", "c: 5 6.0 8"):
        assert line in out, f"{line!r} is no longer printed"
