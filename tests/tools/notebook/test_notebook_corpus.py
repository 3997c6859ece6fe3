"""Every notebook of the corpus (formats 2 to 4.99, tests/fixtures/notebooks) is read, edited, inserted
into, moved and deleted from by cell id; no file is ever damaged, and a refusal says why."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from nbagent.errors import ToolError
from nbagent.tools.notebook import notebook_delete, notebook_edit, notebook_insert, notebook_move, notebook_read
from tests.paths import FIXTURES

CORPUS = sorted((FIXTURES / "notebooks").glob("*.ipynb"))
INVALID = {"v4_5_string_kernelspec.ipynb"}


def _ids(text: str) -> list[tuple[str, str]]:
    return re.findall(r'<cell id="([^"]+)" n="\d+" type="([^"]+)"', text)


@pytest.mark.parametrize("source", CORPUS, ids=[p.name for p in CORPUS])
def test_read_edit_insert_move_delete_on_every_notebook(ctx, source):
    path = ctx.workspace.root / source.name
    shutil.copy(source, path)
    text = notebook_read(ctx, source.name)
    assert len(text) <= ctx.config.output_limit  # every cell listed without the generic cut
    cells = _ids(text)
    raw_cells = json.loads(source.read_text())
    total = len(raw_cells["cells"]) if "cells" in raw_cells else len(raw_cells["worksheets"][0]["cells"])
    assert len(cells) == total
    first, last = cells[0][0], cells[-1][0]
    if source.name in INVALID:
        before = path.read_bytes()
        with pytest.raises(ToolError, match="was already invalid before this change"):
            notebook_edit(ctx, source.name, first, "changed")
        assert path.read_bytes() == before
        return
    notebook_edit(ctx, source.name, last, "edited = True")
    notebook_insert(ctx, source.name, "markdown", "inserted", after_cell_id=first)
    notebook_move(ctx, source.name, last, after_cell_id=None)
    notebook_delete(ctx, source.name, first)
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    after = [c["id"] for c in nb.cells]
    assert after[0] == last and first not in after and len(after) == total
    assert nb.cells[0]["source"] == "edited = True"


def test_a_future_cell_is_shown_kept_byte_for_byte_and_movable(ctx):
    source = next(p for p in CORPUS if p.name == "v4_99_future_cell.ipynb")
    path = ctx.workspace.root / source.name
    shutil.copy(source, path)
    future = json.loads(source.read_text())["cells"][1]
    assert 'type="future-kind"' in notebook_read(ctx, source.name)
    notebook_move(ctx, source.name, "f1", after_cell_id="c1")
    cells = json.loads(path.read_text())["cells"]
    assert [c["id"] for c in cells] == ["m1", "c1", "f1"] and cells[2] == future
    notebook_delete(ctx, source.name, "f1")
    assert [c["id"] for c in json.loads(path.read_text())["cells"]] == ["m1", "c1"]


def test_hundreds_of_cells_show_every_id_type_and_first_line(ctx):
    source = next(p for p in CORPUS if p.name == "v4_5_three_hundred_cells.ipynb")
    shutil.copy(source, ctx.workspace.root / source.name)
    text = notebook_read(ctx, source.name)
    assert [i for i, _ in _ids(text)] == [f"s{i}" for i in range(300)]
    assert all(f"# step {i}\n" in text for i in range(300))
    assert "[+39 lines]" in text and "cells=[its id]" in text
    whole = notebook_read(ctx, source.name, cells=["s39"])
    assert whole.count("value = compute(value)") == 39
