"""``%agent /changes``, ``/undo --path P --cell ID``, ``/redo`` and ``/keep`` through a real InteractiveShell."""

from __future__ import annotations

import json
import subprocess

import pytest
from IPython.utils.capture import capture_output

import nbagent.jupyter as nj
from nbagent import Agent
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel


def run(shell, cell: str) -> str:
    with capture_output() as out:
        result = shell.run_cell(cell)
    assert result.success, result.error_in_exec
    return out.stdout + out.stderr + (str(result.result) if result.result is not None else "")


def cells(nb: dict) -> dict[str, str]:
    return {c["id"]: "".join(c["source"]) for c in nb["cells"]}


@pytest.mark.process
def test_undo_one_cell_by_path_and_id_then_redo_and_keep(shell, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"id": i, "cell_type": "code", "metadata": {}, "source": f"{i} = 1\n", "outputs": [], "execution_count": None}
        for i in ("a", "b")]}
    (workspace / "nb.ipynb").write_text(json.dumps(nb))
    agent = Agent(model=ScriptedModel([Reply(tool_calls=[Call("notebook_read", {"path": "nb.ipynb"})]), Reply(
        tool_calls=[Call("notebook_edit", {"path": "nb.ipynb", "cell_id": i, "source": f"{i} = 2\n"}) for i in "ab"]),
        "Done."]), workspace=workspace, approval="auto")
    nj.use_agent(agent, shell)
    run(shell, "%agent --wait edit both")
    assert "nb.ipynb cell a source" in run(shell, "%agent /changes")
    text = run(shell, "%agent /undo --path nb.ipynb --cell a")
    assert text.startswith("undid 1 change(s) of turn 1: nb.ipynb")
    assert cells(json.loads((workspace / "nb.ipynb").read_text())) == {"a": "a = 1\n", "b": "b = 2\n"}
    assert "no change of the turn at cell zz" in run(shell, "%agent /undo --cell zz")
    assert run(shell, "%agent /redo").startswith("redid 1 change(s) of turn 1")
    assert cells(json.loads((workspace / "nb.ipynb").read_text())) == {"a": "a = 2\n", "b": "b = 2\n"}
    assert run(shell, "%agent /keep").startswith("kept 2 change(s) of turn 1")
