"""Helpers for a task's check.py: read and execute the finished notebooks, the starting files, the answer.

A check runs in a fresh process with the finished workspace as its working directory::

    from nbagent.evals.checks import run_notebook, code_sources, output_text

    def test_the_notebook_runs_and_prints_the_mean():
        nb = run_notebook("analysis.ipynb")          # every cell executed, in a fresh kernel
        assert "mean: 3.5" in output_text(nb)

It sees what a user would see afterwards: the files, and the agent's final answer (``answer()``),
never the transcript. ``original(path)`` reads the file as the task started, to check what must not
have changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

__all__ = ["CellFailed", "answer", "answer_text", "cell", "cells", "code_sources", "failed_tests", "images",
           "markdown_sources", "names", "new_code", "notebook", "original", "original_notebook", "output_text",
           "outputs", "run_notebook", "run_python", "unchanged_except"]

TASK_ENV = "NBAGENT_EVAL_TASK"
"""The task's folder (its workspace/ holds the starting files)."""
ANSWER_ENV = "NBAGENT_EVAL_ANSWER"
"""A file holding the agent's final answer."""


class CellFailed(AssertionError):
    """A cell of an executed notebook raised: which one, and the error (an assertion failure of the check)."""


def notebook(path: str | Path) -> Any:
    """The notebook at ``path`` as saved (an nbformat NotebookNode; outputs as stored)."""
    import nbformat

    return nbformat.read(str(path), as_version=4)


def run_notebook(path: str | Path, *, then: Sequence[str] = (), timeout: float = 120,
                 allow_errors: bool = False) -> Any:
    """Execute every cell of ``path`` top to bottom in a fresh kernel (nbclient), in the notebook's
    folder; the executed notebook (the file is not changed). ``then`` are code cells of the check's
    own run after the notebook's (``then=["print(df.dtypes)"]``: the last cells' outputs tell what
    the notebook left in its kernel). A cell that raises fails the check with CellFailed naming the
    cell and the error, unless ``allow_errors``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = notebook(path)
    for i, source in enumerate(then):
        nb.cells.append(nbformat.v4.new_code_cell(source, id=f"check-{i}"))
    folder = Path(path).resolve().parent
    client = NotebookClient(nb, timeout=int(timeout), kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        raise CellFailed(f"{path}: a cell failed when run top to bottom: {exc.ename}: {exc.evalue}"[:400]) from None
    return nb


def cells(nb: Any, kind: str | None = None) -> list[Any]:
    """The notebook's cells, or those of one kind ("code", "markdown")."""
    return [c for c in nb.cells if kind is None or c.cell_type == kind]


def code_sources(nb: Any) -> list[str]:
    return [c.source for c in cells(nb, "code")]


def markdown_sources(nb: Any) -> list[str]:
    return [c.source for c in cells(nb, "markdown")]


def new_code(nb: Any, before: Any) -> list[str]:
    """The sources of the code cells ``nb`` has that ``before`` did not: the ones the agent added."""
    old = {c.get("id") for c in before.cells}
    return [c.source for c in cells(nb, "code") if c.get("id") not in old]


def answer_text(path: str | Path) -> str:
    """The notebook's markdown after its first cell (the question): where the agent writes its answer."""
    return "\n".join(markdown_sources(notebook(path))[1:])


def outputs(cell: Any) -> str:
    """A code cell's outputs as text: streams, results and errors (images as ``[image/png]``)."""
    parts: list[str] = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(out.get("text", ""))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            parts += [f"[{mime}]" for mime in data if mime.startswith("image/")]
            if "text/plain" in data:
                parts.append(data["text/plain"])
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
    return "\n".join(parts)


def output_text(nb: Any) -> str:
    """Every code cell's outputs as text, in order."""
    return "\n".join(outputs(c) for c in cells(nb, "code"))


def images(nb: Any) -> int:
    """How many images the notebook's outputs hold."""
    return sum(1 for c in cells(nb, "code") for o in c.get("outputs", [])
               for mime in o.get("data", {}) if mime.startswith("image/"))


def cell(nb: Any, cell_id: str) -> Any:
    """The cell with id ``cell_id``; fails the check when there is none."""
    for c in nb.cells:
        if c.get("id") == cell_id:
            return c
    raise AssertionError(f"the notebook has no cell {cell_id!r} any more")


def names(source: str) -> set[str]:
    """The identifiers a piece of Python uses (not the words in its strings or comments)."""
    import io
    import tokenize

    try:
        return {t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.NAME}
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        raise AssertionError(f"not valid Python: {exc}") from None


def same_cell(a: Any, b: Any) -> bool:
    """Whether two cells are the same to their user: kind, source, outputs and metadata."""
    keys = ("cell_type", "source", "outputs", "metadata")
    return all(a.get(k) == b.get(k) for k in keys)


def unchanged_except(nb: Any, before: Any, changed: Sequence[str] = ()) -> None:
    """Every cell of ``before`` but those in ``changed`` is still in ``nb``, the same and in the same
    order; fails the check naming the first that is not."""
    now = {c.get("id"): c for c in nb.cells}
    kept = [c.get("id") for c in nb.cells if c.get("id") in {b.get("id") for b in before.cells}]
    expected = [b.get("id") for b in before.cells if b.get("id") in now]
    for b in before.cells:
        if b.get("id") in changed:
            continue
        assert b.get("id") in now, f"cell {b.get('id')!r} was deleted"
        assert same_cell(now[b.get("id")], b), f"cell {b.get('id')!r} was changed"
    assert kept == expected, "the user's cells are not in their order any more"


def original(path: str | Path) -> Path:
    """Where the file at ``path`` (relative to the workspace) was when the task started."""
    task = os.environ.get(TASK_ENV)
    if not task:
        raise RuntimeError(f"{TASK_ENV} is not set: checks run under nbagent's eval runner")
    return Path(task) / "workspace" / path


def original_notebook(path: str | Path) -> Any:
    return notebook(original(path))


def answer() -> str:
    """The agent's final answer, as the user read it ("" when it gave none)."""
    where = os.environ.get(ANSWER_ENV)
    return Path(where).read_text(encoding="utf-8") if where and Path(where).is_file() else ""


def run_python(*args: str, timeout: float = 120) -> Any:
    """Run ``python ARGS`` (this interpreter) in the workspace; the CompletedProcess (text output)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def failed_tests(module: str, source: str, tests_file: str | Path) -> list[str]:
    """Run the test functions of ``tests_file`` against ``source`` imported as ``module``; the names of
    those that fail. A task that asks for tests checks them both ways: they pass on the module as it is,
    and some fail on a copy of it with a bug planted (so tests that assert nothing do not pass)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_loader(module, loader=None)
    assert spec is not None
    loaded = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{module}.py", "exec"), loaded.__dict__)
    sys.modules[module] = loaded
    tests_spec = importlib.util.spec_from_file_location("the_tests", str(tests_file))
    assert tests_spec is not None and tests_spec.loader is not None, f"cannot load {tests_file}"
    tests = importlib.util.module_from_spec(tests_spec)
    tests_spec.loader.exec_module(tests)
    functions = [f for name, f in vars(tests).items() if name.startswith("test") and callable(f)]
    assert functions, f"{tests_file} has no test functions"
    failed = []
    for function in functions:
        try:
            function()
        except Exception:
            failed.append(function.__name__)
    return failed
