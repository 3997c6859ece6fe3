"""Reviewing a turn: its changes as rows, kept, undone and redone one by one (real git, files, SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbagent import Agent
from nbagent import events as ev
from nbagent.checkpoints import CheckpointError
from nbagent.store.db import Database
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

from .repos import git

SOURCES = {"a": "import math\nx = 1\n", "b": "def f(y):\n    return y\n", "c": "one\ntwo\nthree\nfour\nfive\n"}


def notebook(sources: dict[str, str]) -> str:
    cells = [{"id": cid, "cell_type": "code", "metadata": {}, "source": src, "outputs": [], "execution_count": None}
             for cid, src in sources.items()]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}, indent=1)


def sources_of(path: Path) -> dict[str, str]:
    return {c["id"]: "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in json.loads(path.read_text())["cells"]}


@pytest.fixture
def workspace(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "nb.ipynb").write_text(notebook(SOURCES))
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\ndelta\nepsilon\n")
    return root


def read_first() -> Reply:
    return Reply(tool_calls=[Call("notebook_read", {"path": "nb.ipynb"})])


def three_cell_edit() -> Reply:
    return Reply(tool_calls=[
        Call("notebook_edit", {"path": "nb.ipynb", "cell_id": "a", "source": "import math\nx = 2\n"}),
        Call("notebook_edit", {"path": "nb.ipynb", "cell_id": "b", "source": "def f(y):\n    return y * 2\n"}),
        Call("notebook_edit", {"path": "nb.ipynb", "cell_id": "c", "source": "ONE\ntwo\nthree\nfour\nFIVE\n"}),
    ])


@pytest.fixture
def agent(workspace):
    made = Agent(model=ScriptedModel([read_first(), three_cell_edit(), "Edited.", Reply(tool_calls=[
        Call("write_file", {"path": "notes.txt", "content": "ALPHA\nbeta\ngamma\ndelta\nEPSILON\n"})]), "Done."]),
        workspace=workspace, approval="auto")
    yield made
    made.close()


@pytest.mark.process
def test_rows_keep_undo_hunk_redo(workspace, agent):
    agent.run("edit three cells")
    rows = agent.changes()
    assert [(r.cell_id, r.kind, r.hunk, r.status) for r in rows] == [
        ("a", "source", 0, "pending"), ("b", "source", 0, "pending"),
        ("c", "source", 0, "pending"), ("c", "source", 1, "pending")]
    assert (rows[0].before, rows[0].after, rows[0].start_before) == ("x = 1\n", "x = 2\n", 2)
    assert [r.id for r in agent.changes()] == [r.id for r in rows]  # stable ids
    assert list(rows.frame().columns[:4]) == ["id", "session", "turn", "path"]
    assert "<table>" in rows._repr_html_()

    seen: list = []
    agent.subscribe(seen.append)
    kept = agent.keep(only=["a"])
    assert kept.done == [rows[0].id]
    undone = agent.undo(only="b")
    assert undone.done == [rows[1].id] and undone.files == ["nb.ipynb"]
    agent.undo(only=[rows[3].id])  # the second hunk of cell c
    assert sources_of(workspace / "nb.ipynb") == {
        "a": "import math\nx = 2\n", "b": SOURCES["b"], "c": "ONE\ntwo\nthree\nfour\nfive\n"}
    statuses = [r.status for r in agent.changes()]
    assert statuses == ["kept", "undone", "pending", "undone"]
    marks = [e for e in seen if isinstance(e, ev.Checkpoint)]
    assert [(m.action, m.rows) for m in marks] == [("undone", [rows[1].id]), ("undone", [rows[3].id])]
    reviewed = [e for e in seen if isinstance(e, ev.ChangesReviewed)]
    assert [(e.path, e.pending) for e in reviewed] == [("nb.ipynb", 3), ("nb.ipynb", 2), ("nb.ipynb", 1)]
    assert "undid part of turn 1" in agent.session.messages[-1]["content"]

    agent.redo()  # the newest partial undo: the hunk of c
    assert sources_of(workspace / "nb.ipynb")["c"] == "ONE\ntwo\nthree\nfour\nFIVE\n"
    assert [r.status for r in agent.changes()] == ["kept", "undone", "pending", "pending"]
    agent.redo(only="b")
    assert sources_of(workspace / "nb.ipynb")["b"] == "def f(y):\n    return y * 2\n"

    agent.keep()
    assert all(r.status == "kept" for r in agent.changes())
    assert agent.keep().done == []  # nothing pending any more


@pytest.mark.process
def test_refused_where_the_user_edited_since_and_whole_undo_after(workspace, agent):
    agent.run("edit three cells")
    rows = agent.changes()
    nb = json.loads((workspace / "nb.ipynb").read_text())
    nb["cells"][1]["source"] = "def f(y):\n    return y * 3  # mine\n"  # the user's edit of cell b
    nb["cells"][2]["source"] = "ONE\ntwo\nthree (mine)\nfour\nFIVE\n"  # a line between c's two hunks
    (workspace / "nb.ipynb").write_text(json.dumps(nb))
    done = agent.undo(only=["b", "c"])
    assert [i for i, _ in done.refused] == [rows[1].id]
    assert "changed since" in done.refused[0][1]
    assert sources_of(workspace / "nb.ipynb")["c"] == "one\ntwo\nthree (mine)\nfour\nfive\n"  # both hunks, mine kept
    assert sources_of(workspace / "nb.ipynb")["b"].endswith("# mine\n")

    nb = json.loads((workspace / "nb.ipynb").read_text())
    nb["cells"][1]["source"] = "def f(y):\n    return y * 2\n"
    nb["cells"][2]["source"] = "one\ntwo\nthree\nfour\nfive\n"
    (workspace / "nb.ipynb").write_text(json.dumps(nb))
    with pytest.raises(CheckpointError):  # the whole turn: cell c is not where the review left it
        agent.undo()
    agent.undo(force=True)
    assert sources_of(workspace / "nb.ipynb") == SOURCES


@pytest.mark.process
def test_text_file_hunks_and_several_turns(workspace, agent):
    agent.run("edit three cells")
    agent.run("edit the notes")
    assert [r.turn for r in agent.changes()] == [2, 2]
    assert [(r.kind, r.hunk, r.before, r.after) for r in agent.changes()] == [
        ("file", 0, "alpha\n", "ALPHA\n"), ("file", 1, "epsilon\n", "EPSILON\n")]
    agent.undo(only=[agent.changes()[1]])
    assert (workspace / "notes.txt").read_text() == "ALPHA\nbeta\ngamma\ndelta\nepsilon\n"
    assert len(agent.changes(turn=1)) == 4  # the earlier turn is still reviewable
    agent.undo(turn=1, only="a")
    assert sources_of(workspace / "nb.ipynb")["a"] == SOURCES["a"]
    agent.undo()  # the whole newest turn, from where its review left it
    assert (workspace / "notes.txt").read_text() == "alpha\nbeta\ngamma\ndelta\nepsilon\n"
    agent.redo()
    assert (workspace / "notes.txt").read_text() == "ALPHA\nbeta\ngamma\ndelta\nepsilon\n"
    with pytest.raises(CheckpointError, match="no change of turn"):
        agent.undo(only="nope")


@pytest.mark.process
def test_cells_added_deleted_moved_and_outputs(workspace):
    nb = json.loads(notebook(SOURCES))
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "old\n"}]
    (workspace / "nb.ipynb").write_text(json.dumps(nb))
    reply = Reply(tool_calls=[
        Call("notebook_insert", {"path": "nb.ipynb", "cell_type": "markdown", "source": "# new", "after_cell_id": "a"}),
        Call("notebook_delete", {"path": "nb.ipynb", "cell_id": "b"}),
        Call("notebook_move", {"path": "nb.ipynb", "cell_id": "c", "after_cell_id": None}),
    ])
    agent = Agent(model=ScriptedModel([read_first(), reply, "Done."]), workspace=workspace, approval="auto")
    try:
        agent.run("restructure")
        kinds = sorted((r.kind, r.cell_id or "") for r in agent.changes())
        assert [k for k, _ in kinds] == ["added", "deleted", "moved"]
        agent.undo(only=[r for r in agent.changes() if r.kind != "added"])
        cells = json.loads((workspace / "nb.ipynb").read_text())["cells"]
        assert [c["id"] for c in cells][0] == "a" and "b" in [c["id"] for c in cells]
        agent.undo(only=[r for r in agent.changes() if r.kind == "added"])
        assert sources_of(workspace / "nb.ipynb") == SOURCES
        assert json.loads((workspace / "nb.ipynb").read_text())["cells"][0]["outputs"][0]["text"] in ("old\n", ["old\n"])
    finally:
        agent.close()


def test_review_table_is_a_migration(tmp_path):
    db = Database(tmp_path / "x.db")
    with db.read() as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"change_reviews", "change_review_turns"} <= names
    db.close()


@pytest.mark.process
def test_cli_undo_and_redo_of_one_cell(workspace, agent, capsys):
    from nbagent.cli.app import main as cli_main

    agent.run("edit three cells")
    session = agent.session_id
    agent.close()
    assert cli_main(["undo", "-w", str(workspace), "-s", session, "--path", "nb.ipynb", "--cell", "b"]) == 0
    assert "undid 1 change(s) of turn 1" in capsys.readouterr().out
    assert sources_of(workspace / "nb.ipynb")["b"] == SOURCES["b"]
    assert sources_of(workspace / "nb.ipynb")["a"] == "import math\nx = 2\n"
    assert cli_main(["redo", "-w", str(workspace), "-s", session, "--cell", "b"]) == 0
    assert sources_of(workspace / "nb.ipynb")["b"] == "def f(y):\n    return y * 2\n"
    assert cli_main(["undo", "-w", str(workspace), "-s", session, "--cell", "nope"]) == 1
    assert "no change of the turn at cell nope" in capsys.readouterr().err


@pytest.mark.process
def test_review_before_writing_keep_applies_and_undo_rejects(workspace):
    agent = Agent(model=ScriptedModel([read_first(), three_cell_edit(), "Suggested."]), workspace=workspace,
                  approval="auto", review_before_writing=True)
    try:
        result = agent.run("edit three cells")
        outputs = [e.output for e in result.events if isinstance(e, ev.ToolResult) and e.name == "notebook_edit"]
        assert len(outputs) == 3 and all(o.startswith("Suggested, not written") for o in outputs)
        assert sources_of(workspace / "nb.ipynb") == SOURCES  # nothing written
        rows = agent.changes()
        assert [(r.cell_id, r.kind, r.status) for r in rows] == [("a", "source", "suggested"),
                                                               ("b", "source", "suggested"),
                                                               ("c", "source", "suggested")]
        assert rows[0].after == "import math\nx = 2\n"
        assert agent.keep(only=["a", "c"]).done == [rows[0].id, rows[2].id]
        assert agent.undo(only="b").done == [rows[1].id]  # rejected: discarded
        assert sources_of(workspace / "nb.ipynb") == {"a": "import math\nx = 2\n", "b": SOURCES["b"],
                                                      "c": "ONE\ntwo\nthree\nfour\nFIVE\n"}
        assert [r.status for r in agent.changes()] == ["kept", "undone", "kept"]
        agent.reconfigure(review_before_writing=False)
        assert agent.runtime.settings()["review_before_writing"] is False
    finally:
        agent.close()
