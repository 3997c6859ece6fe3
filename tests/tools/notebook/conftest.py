"""Fixtures for the notebook and kernel tools: a real workspace, real notebooks, a real IPython shell."""

from __future__ import annotations

import json

import nbformat
import pytest

from nbagent.testing import tool_context


@pytest.fixture
def ctx(tmp_path):
    return tool_context(tmp_path, state=False)


@pytest.fixture
def sample(tmp_path):
    """analysis.ipynb: markdown, a code cell with outputs, a code cell, a raw cell."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Sales\nQuarterly numbers."),
        nbformat.v4.new_code_cell("import math\nprint(math.pi)", execution_count=1, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="3.141592653589793\n")]),
        nbformat.v4.new_code_cell("total = 2 + 2\ntotal", execution_count=2, outputs=[
            nbformat.v4.new_output("execute_result", data={"text/plain": "4"}, execution_count=2)]),
        nbformat.v4.new_raw_cell("raw text"),
    ]
    path = tmp_path / "analysis.ipynb"
    nbformat.write(nb, path)
    return path


def cells_json(path) -> dict[str, str]:
    """cell id -> the cell's JSON serialisation as stored, for byte-identity checks."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {c["id"]: json.dumps(c, sort_keys=True) for c in data["cells"]}


def cell_ids(path) -> list[str]:
    return [c["id"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def valid(path) -> bool:
    nbformat.validate(nbformat.read(path, as_version=nbformat.NO_CONVERT))
    return True
