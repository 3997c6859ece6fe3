"""Restoring an open notebook cell by cell: the operations the live document applies give the target."""

from __future__ import annotations

import copy

from nbagent.checkpoints.notebooks import cell_ops, same_notebook
from nbagent.tools.nbdoc import apply_ops


def code(cell_id, source, outputs=(), count=None):
    return {"id": cell_id, "cell_type": "code", "metadata": {}, "source": source, "outputs": list(outputs),
            "execution_count": count}


def md(cell_id, source):
    return {"id": cell_id, "cell_type": "markdown", "metadata": {}, "source": source}


def test_cell_ops_turn_the_current_cells_into_the_checkpoints():
    out = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    before = [md("title", "# Analysis"), code("load", "x = 1", [out], 1), code("plot", "plot(x)"),
              md("end", "fin")]
    # The agent's turn: edited one cell, deleted one, inserted one, moved one, changed a type.
    after = [code("load", "x = 2"), md("title", "# Analysis v2"), code("new", "y = x"), code("end", "fin")]
    nb = {"cells": copy.deepcopy(after)}
    apply_ops(nb, cell_ops(after, before), "analysis.ipynb")
    assert nb["cells"] == before  # ids, order, sources, types and outputs back
    nb = {"cells": copy.deepcopy(before)}
    apply_ops(nb, cell_ops(before, after), "analysis.ipynb")
    assert [(c["id"], c["cell_type"], c["source"]) for c in nb["cells"]] == \
        [(c["id"], c["cell_type"], c["source"]) for c in after]


def test_an_unchanged_notebook_needs_no_operation():
    cells = [md("a", "x"), code("b", "y")]
    assert cell_ops(cells, copy.deepcopy(cells)) == []


def test_a_notebook_saved_in_another_formatting_is_the_same_notebook():
    import json

    out = {"output_type": "stream", "name": "stdout", "text": "a\nb\n"}
    nb = {"cells": [code("load", "x = 1\ny = 2", [out], 1)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    compact = json.dumps(nb).encode()
    # How nbformat (and so a collaboration room) writes it: sorted keys, indented, lines as lists.
    lines = json.loads(json.dumps(nb))
    lines["cells"][0]["source"] = ["x = 1\n", "y = 2"]
    lines["cells"][0]["outputs"][0]["text"] = ["a\n", "b\n"]
    assert same_notebook(compact, json.dumps(lines, indent=1, sort_keys=True).encode() + b"\n")
    lines["cells"][0]["source"] = ["x = 1\n", "y = 3"]
    assert not same_notebook(compact, json.dumps(lines).encode())
    assert not same_notebook(compact, b"not json")


def test_cells_in_place_are_not_moved_and_outputs_run_since_are_kept():
    out = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    before = [md("a", "# A"), code("b", "x = 1"), code("agent", "%agent add a cell")]
    after = [md("a", "# A"), code("new", "y = 2"), code("b", "x = 1"), code("agent", "%agent add a cell")]
    # Since the turn: the %agent cell finished (its count and view), cell b was run.
    now = copy.deepcopy(after)
    now[2]["outputs"], now[2]["execution_count"] = [out], 7
    now[3]["outputs"], now[3]["execution_count"] = [{"output_type": "display_data", "data": {}, "metadata": {}}], 3
    ops = cell_ops(now, before, after)
    assert [op["op"] for op in ops] == ["delete"]  # no moves, no outputs reset
    nb = {"cells": copy.deepcopy(now)}
    apply_ops(nb, ops, "n.ipynb")
    assert [c["id"] for c in nb["cells"]] == ["a", "b", "agent"] and nb["cells"][1]["execution_count"] == 7
    # Outputs the turn changed (notebook_run) and nobody touched since go back.
    ran = copy.deepcopy(before)
    ran[1]["outputs"], ran[1]["execution_count"] = [out], 1
    assert [op["op"] for op in cell_ops(copy.deepcopy(ran), before, ran)] == ["outputs"]


def test_what_the_user_did_since_the_turn_stays():
    import pytest

    from nbagent.tools.nbdoc import StaleCell

    before = [md("a", "# A"), code("b", "x = 1"), code("c", "z = 0")]
    after = [md("a", "# A"), code("b", "x = 2"), code("new", "y = 2"), code("c", "z = 0")]
    # Since the turn: typed in cell c (the turn did not touch it), added a cell of their own.
    now = copy.deepcopy(after)
    now[3]["source"] = "z = 0  # mine"
    now.append(code("theirs", "print(x)"))
    nb = {"cells": copy.deepcopy(now)}
    apply_ops(nb, cell_ops(now, before, after), "n.ipynb")
    assert [(c["id"], c["source"]) for c in nb["cells"]] == \
        [("a", "# A"), ("b", "x = 1"), ("c", "z = 0  # mine"), ("theirs", "print(x)")]
    # A cell the turn changed and the user changed since: refused, nothing written.
    now[1]["source"] = "x = 2  # also mine"
    nb = {"cells": copy.deepcopy(now)}
    with pytest.raises(StaleCell):
        apply_ops(nb, cell_ops(now, before, after), "n.ipynb")
    # Forced (no base): the checkpoint's cells exactly.
    nb = {"cells": copy.deepcopy(now)}
    apply_ops(nb, cell_ops(now, before), "n.ipynb")
    assert nb["cells"] == before
