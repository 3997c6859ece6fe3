"""Round trips of the notebook tools on real notebooks written by nbformat."""

from __future__ import annotations

import json
import os
import re

import nbformat
import pytest

from nbagent.errors import ToolError
from nbagent.tools import notebook as nbt

from .conftest import cell_ids, cells_json, valid


def v_of(text: str, cell_id: str) -> str:
    return re.search(rf'id="{cell_id}" n="\d+" type="\w+" v="(\w+)"', text).group(1)


def test_read_shows_ids_types_sources_and_version(ctx, sample):
    ids = cell_ids(sample)
    text = nbt.notebook_read(ctx, "analysis.ipynb")
    assert text.startswith("analysis.ipynb: 4 cells, nbformat 4.5, kernel python3")
    md, code = nbt.cell_token("markdown", "# Sales\nQuarterly numbers."), nbt.cell_token("code", "total = 2 + 2\ntotal")
    assert f'<cell id="{ids[0]}" n="1" type="markdown" v="{md}">\n# Sales\nQuarterly numbers.\n</cell>' in text
    assert f'<cell id="{ids[2]}" n="3" type="code" v="{code}" exec="2">\ntotal = 2 + 2\ntotal\n</cell>' in text
    assert "(1 output(s): stdout; include_outputs=true shows them)" in text
    assert "3.14159" not in text  # outputs only when asked
    assert "read from the file" in text


def test_read_selected_cells_with_outputs(ctx, sample):
    ids = cell_ids(sample)
    text = nbt.notebook_read(ctx, "analysis.ipynb", cells=[ids[2], ids[1]], include_outputs=True)
    assert ids[0] not in text and ids[3] not in text
    assert text.index(ids[1]) < text.index(ids[2])  # notebook order, whatever the order asked
    assert "[stdout]\n3.141592653589793" in text
    assert "[result 2]\n4" in text or "[result 2] 4" in text
    with pytest.raises(ToolError, match="no cell with id 'nope'"):
        nbt.notebook_read(ctx, "analysis.ipynb", cells=["nope"])


def test_edit_replaces_source_clears_outputs_and_keeps_other_cells_identical(ctx, sample):
    ids = cell_ids(sample)
    before = cells_json(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    result = nbt.notebook_edit(ctx, "analysis.ipynb", ids[1], "import math\nprint(round(math.pi, 2))")
    assert f"edited cell {ids[1]} (code, #2 of 4): 2 -> 2 lines; 1 output(s) cleared" in result
    assert valid(sample)
    after = cells_json(sample)
    assert cell_ids(sample) == ids
    for cell_id in (ids[0], ids[2], ids[3]):
        assert after[cell_id] == before[cell_id]
    edited = json.loads(after[ids[1]])
    assert "".join(edited["source"]) == "import math\nprint(round(math.pi, 2))"
    assert edited["outputs"] == [] and edited["execution_count"] is None
    token = nbt.cell_token("code", "import math\nprint(round(math.pi, 2))")
    assert f"cell {ids[1]} is now v={token}" in result


def test_edits_chain_on_the_version_each_one_wrote(ctx, sample):
    ids = cell_ids(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    nbt.notebook_edit(ctx, "analysis.ipynb", ids[0], "# Sales 2026")
    nbt.notebook_edit(ctx, "analysis.ipynb", ids[3], "raw 2")  # no read in between: our own write counts
    nb = nbformat.read(sample, as_version=4)
    assert [c.source for c in nb.cells][::3] == ["# Sales 2026", "raw 2"]


def test_edit_can_change_the_cell_type(ctx, sample):
    ids = cell_ids(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    result = nbt.notebook_edit(ctx, "analysis.ipynb", ids[2], "Total is **4**.", cell_type="markdown")
    assert "code -> markdown" in result
    cell = nbformat.read(sample, as_version=4).cells[2]
    assert cell.cell_type == "markdown" and cell.id == ids[2]
    assert "outputs" not in cell and "execution_count" not in cell
    assert valid(sample)


def test_insert_after_a_cell_and_at_the_top(ctx, sample):
    ids = cell_ids(sample)
    before = cells_json(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    result = nbt.notebook_insert(ctx, "analysis.ipynb", "code", "print('new')", after_cell_id=ids[1])
    new_id = re.search(r"inserted code cell (\S+) at #3 of 5", result).group(1)
    top = nbt.notebook_insert(ctx, "analysis.ipynb", "markdown", "Intro")
    top_id = re.search(r"inserted markdown cell (\S+) at #1 of 6", top).group(1)
    assert cell_ids(sample) == [top_id, ids[0], ids[1], new_id, ids[2], ids[3]]
    assert valid(sample)
    after = cells_json(sample)
    assert all(after[i] == before[i] for i in ids)


def test_delete(ctx, sample):
    ids = cell_ids(sample)
    before = cells_json(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    result = nbt.notebook_delete(ctx, "analysis.ipynb", ids[1])
    assert f"deleted cell {ids[1]} (code, was #2); 3 cell(s) remain" in result
    assert cell_ids(sample) == [ids[0], ids[2], ids[3]]
    assert valid(sample)
    after = cells_json(sample)
    assert all(after[i] == before[i] for i in (ids[0], ids[2], ids[3]))


def test_move_after_a_cell_and_to_the_top(ctx, sample):
    ids = cell_ids(sample)
    before = cells_json(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    assert "from #1 to #3 of 4" in nbt.notebook_move(ctx, "analysis.ipynb", ids[0], after_cell_id=ids[2])
    assert cell_ids(sample) == [ids[1], ids[2], ids[0], ids[3]]
    nbt.notebook_move(ctx, "analysis.ipynb", ids[3])
    assert cell_ids(sample) == [ids[3], ids[1], ids[2], ids[0]]
    assert valid(sample)
    assert cells_json(sample) == before  # moved, not changed: every cell byte-identical
    with pytest.raises(ToolError, match="already there"):
        nbt.notebook_move(ctx, "analysis.ipynb", ids[3])
    with pytest.raises(ToolError, match="after itself"):
        nbt.notebook_move(ctx, "analysis.ipynb", ids[1], after_cell_id=ids[1])


def test_unknown_cell_id_lists_the_ids_and_writes_nothing(ctx, sample):
    raw = sample.read_bytes()
    nbt.notebook_read(ctx, "analysis.ipynb")
    with pytest.raises(ToolError) as err:
        nbt.notebook_edit(ctx, "analysis.ipynb", "2", "x = 1")
    assert all(i in str(err.value) for i in cell_ids(sample)) and "not positions" in str(err.value)
    assert sample.read_bytes() == raw


def test_a_cell_changed_since_the_read_is_refused_and_other_cells_still_edit(ctx, sample):
    ids = cell_ids(sample)
    first = nbt.notebook_read(ctx, "analysis.ipynb")
    # The user saves from JupyterLab meanwhile: a new cell and a changed one.
    nb = nbformat.read(sample, as_version=4)
    nb.cells[2].source = "total = 40 + 2\ntotal"
    nb.cells.append(nbformat.v4.new_code_cell("user_work = True"))
    nbformat.write(nb, sample)
    theirs = sample.read_bytes()

    for call in (lambda: nbt.notebook_edit(ctx, "analysis.ipynb", ids[2], "total = 0"),
                 lambda: nbt.notebook_edit(ctx, "analysis.ipynb", ids[2], "total = 0", version=v_of(first, ids[2])),
                 lambda: nbt.notebook_delete(ctx, "analysis.ipynb", ids[2]),
                 lambda: nbt.notebook_move(ctx, "analysis.ipynb", ids[2], after_cell_id=ids[0]),
                 lambda: nbt.notebook_edit_preview(ctx, "analysis.ipynb", ids[2], "total = 0")):
        with pytest.raises(ToolError, match="changed since you read it.*Read it again with notebook_read"):
            call()
        assert sample.read_bytes() == theirs

    # Cells the user did not touch still change, and the user's work stays.
    nbt.notebook_edit(ctx, "analysis.ipynb", ids[0], "# Sales 2026")
    nbt.notebook_insert(ctx, "analysis.ipynb", "code", "x = 1", after_cell_id=ids[0])
    nbt.notebook_read(ctx, "analysis.ipynb", cells=[ids[2]])
    nbt.notebook_edit(ctx, "analysis.ipynb", ids[2], "total = 40 + 2 + 0\ntotal")
    nb = nbformat.read(sample, as_version=4)
    assert [c.source for c in nb.cells] == ["# Sales 2026", "x = 1", "import math\nprint(math.pi)",
                                            "total = 40 + 2 + 0\ntotal", "raw text", "user_work = True"]


def test_a_range_edit_keeps_what_changed_elsewhere_in_the_cell(ctx, sample):
    ids = cell_ids(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    nb = nbformat.read(sample, as_version=4)
    nb.cells[1].source = "# the user's note: héllo wörld ✓\nimport math\nprint(math.pi)"
    nbformat.write(nb, sample)
    result = nbt.notebook_edit(ctx, "analysis.ipynb", ids[1], "print(round(math.pi, 3))", old_text="print(math.pi)")
    assert f"edited cell {ids[1]}" in result
    cell = nbformat.read(sample, as_version=4).cells[1]
    assert cell.source == "# the user's note: héllo wörld ✓\nimport math\nprint(round(math.pi, 3))"
    with pytest.raises(ToolError, match="does not occur"):
        nbt.notebook_edit(ctx, "analysis.ipynb", ids[1], "x", old_text="print(math.pi)")
    with pytest.raises(ToolError, match="occurs 2 times"):
        nbt.notebook_edit(ctx, "analysis.ipynb", ids[1], "x", old_text="math")


def test_a_wrong_version_is_refused(ctx, sample):
    nbt.notebook_read(ctx, "analysis.ipynb")
    with pytest.raises(ToolError, match="changed since you read it"):
        nbt.notebook_delete(ctx, "analysis.ipynb", cell_ids(sample)[0], version="3")


def test_a_touch_without_a_content_change_is_not_a_conflict(ctx, sample):
    ids = cell_ids(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    os.utime(sample, ns=(1_000_000_000, 1_000_000_000))
    nbt.notebook_edit(ctx, "analysis.ipynb", ids[0], "# Touched")
    assert nbformat.read(sample, as_version=4).cells[0].source == "# Touched"


def test_changes_need_a_read_or_a_version(ctx, sample):
    ids = cell_ids(sample)
    with pytest.raises(ToolError, match="read analysis.ipynb with notebook_read first"):
        nbt.notebook_delete(ctx, "analysis.ipynb", ids[0])
    other = nbt.notebook_read(ctx.__class__(**{**ctx.__dict__, "extras": {}}), "analysis.ipynb")
    nbt.notebook_delete(ctx, "analysis.ipynb", ids[0], version=v_of(other, ids[0]))
    assert cell_ids(sample) == ids[1:]


def test_previews_show_a_cell_diff_and_write_nothing(ctx, sample):
    ids = cell_ids(sample)
    nbt.notebook_read(ctx, "analysis.ipynb")
    raw, mtime = sample.read_bytes(), sample.stat().st_mtime_ns
    diff = nbt.notebook_edit_preview(ctx, "analysis.ipynb", ids[2], "total = 2 + 3\ntotal")
    assert diff.splitlines()[:5] == [
        f"--- analysis.ipynb cell {ids[2]} (#3, code)",
        f"+++ analysis.ipynb cell {ids[2]} (#3 of 4, code)",
        "@@ -1,2 +1,2 @@",
        "-total = 2 + 2",
        "+total = 2 + 3",
    ]
    assert diff.rstrip().endswith("# 1 output(s) cleared")
    insert = nbt.notebook_insert_preview(ctx, "analysis.ipynb", "code", "y = 1", after_cell_id=ids[0])
    assert "(#2 of 5, code) after cell" in insert and "+y = 1" in insert
    delete = nbt.notebook_delete_preview(ctx, "analysis.ipynb", ids[3])
    assert f"(cell {ids[3]} deleted)" in delete and "-raw text" in delete
    move = nbt.notebook_move_preview(ctx, "analysis.ipynb", ids[0], after_cell_id=ids[3])
    assert f"+++ analysis.ipynb cell {ids[0]} (#4 of 4, markdown) after cell {ids[3]}" in move
    assert sample.read_bytes() == raw and sample.stat().st_mtime_ns == mtime


def test_a_notebook_without_cell_ids_gets_the_ids_it_was_read_with(ctx, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_markdown_cell("text"),
                nbformat.v4.new_code_cell("a = 1")]
    data = json.loads(nbformat.writes(nb))
    data["nbformat_minor"] = 4
    for cell in data["cells"]:
        del cell["id"]
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")

    first, second = nbt.notebook_read(ctx, "old.ipynb"), nbt.notebook_read(ctx, "old.ipynb")
    shown = re.findall(r'<cell id="([^"]+)"', first)
    assert shown == re.findall(r'<cell id="([^"]+)"', second) and len(set(shown)) == 3
    assert "nbformat 4.4, which stores no cell ids" in first
    result = nbt.notebook_edit(ctx, "old.ipynb", shown[1], "new text")
    assert "it is now nbformat 4.5" in result
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["nbformat_minor"] == 5 and [c["id"] for c in stored["cells"]] == shown
    assert valid(path)


def test_an_edit_that_leaves_the_notebook_invalid_is_refused(ctx, sample):
    data = json.loads(sample.read_text(encoding="utf-8"))
    data["cells"][1]["execution_count"] = "one"  # invalid already; nbformat would refuse to write it
    sample.write_text(json.dumps(data, indent=1), encoding="utf-8")
    raw = sample.read_bytes()
    nbt.notebook_read(ctx, "analysis.ipynb")
    with pytest.raises(ToolError, match="invalid .*nothing was written"):
        nbt.notebook_edit(ctx, "analysis.ipynb", data["cells"][0]["id"], "# Title")
    assert sample.read_bytes() == raw


def test_not_a_notebook_and_outside_the_workspace(ctx, tmp_path):
    (tmp_path / "notes.ipynb").write_text("not json", encoding="utf-8")
    with pytest.raises(ToolError, match="not a readable notebook"):
        nbt.notebook_read(ctx, "notes.ipynb")
    with pytest.raises(ToolError, match="no such notebook"):
        nbt.notebook_read(ctx, "missing.ipynb")
    with pytest.raises(ToolError, match="outside the workspace"):
        nbt.notebook_read(ctx, "../elsewhere.ipynb")
    with pytest.raises(ToolError, match=".nbagent"):
        nbt.notebook_insert(ctx, ".nbagent/x.ipynb", "code", "x = 1")


def test_insert_into_a_missing_path_creates_a_notebook(ctx, tmp_path):
    result = nbt.notebook_insert(ctx, "new/fresh.ipynb", "code", "print('hello')")
    assert "new/fresh.ipynb (a new notebook): inserted code cell" in result
    path = tmp_path / "new" / "fresh.ipynb"
    assert valid(path) and nbformat.read(path, as_version=4).cells[0].source == "print('hello')"
    with pytest.raises(ToolError, match="must end in .ipynb"):
        nbt.notebook_insert(ctx, "plain.txt", "code", "x")


def test_an_empty_notebook_once_read_takes_an_insert(ctx, tmp_path):
    """A valid notebook with no cells (a new one from JupyterLab): reading it is all the read there is."""
    path = tmp_path / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)
    with pytest.raises(ToolError, match="read empty.ipynb with notebook_read first"):
        nbt.notebook_insert(ctx, "empty.ipynb", "markdown", "# Title")
    assert "(no cells)" in nbt.notebook_read(ctx, "empty.ipynb")
    result = nbt.notebook_insert(ctx, "empty.ipynb", "markdown", "# Title")
    assert "inserted markdown cell" in result
    assert valid(path) and [c.source for c in nbformat.read(path, as_version=4).cells] == ["# Title"]


def test_writes_are_atomic_and_keep_the_file_mode(ctx, sample):
    sample.chmod(0o640)
    nbt.notebook_read(ctx, "analysis.ipynb")
    nbt.notebook_edit(ctx, "analysis.ipynb", cell_ids(sample)[0], "# New title")
    assert sample.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in sample.parent.iterdir()) == ["analysis.ipynb"]  # no temporary file left


def test_no_op_edit_is_refused(ctx, sample):
    nbt.notebook_read(ctx, "analysis.ipynb")
    with pytest.raises(ToolError, match="already has this source"):
        nbt.notebook_edit(ctx, "analysis.ipynb", cell_ids(sample)[3], "raw text")


def test_the_tool_set():
    tools = {t.name: t for t in nbt.NOTEBOOK.tools}
    assert list(tools) == ["notebook_read", "notebook_edit", "notebook_insert", "notebook_delete", "notebook_move",
                           "notebook_run", "notebook_check"]
    assert tools["notebook_run"].approval == "always_ask"
    # notebook_check runs the notebook's code: never read-only (issue 35)
    assert tools["notebook_check"].runs == "sandbox" and not tools["notebook_check"].read_only
    assert set(tools["notebook_check"].parameters["properties"]) == {
        "path", "timeout"}
    assert set(tools["notebook_run"].parameters["properties"]) == {"path", "cell_ids"}
    assert tools["notebook_read"].read_only and tools["notebook_read"].approval == "never"
    for name in ("notebook_edit", "notebook_insert", "notebook_delete", "notebook_move"):
        assert tools[name].approval == "ask" and tools[name].preview is not None
        assert "version" in tools[name].parameters["properties"]
    assert tools["notebook_edit"].parameters["required"] == ["path", "cell_id", "source"]
    assert set(tools["notebook_read"].parameters["properties"]) == {"path", "cells", "include_outputs"}


def test_running_cells_needs_a_jupyter_server(ctx, sample):
    with pytest.raises(ToolError, match="needs the notebook open in a Jupyter server"):
        nbt.notebook_run(ctx, "analysis.ipynb", cell_ids(sample)[1:2])
