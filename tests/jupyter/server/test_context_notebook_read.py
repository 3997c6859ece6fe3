"""The context route's read of a saved notebook goes through the safe read: no check-then-open race."""

from __future__ import annotations

import json
import os

import pytest

from nbagent.errors import ToolError
from nbagent.jupyter.server import context_routes
from nbagent.workspace.root import Workspace


def test_a_saved_notebook_is_read_and_a_fifo_refused_without_blocking(tmp_path):
    (tmp_path / "a.ipynb").write_text(json.dumps({"cells": [], "nbformat": 4}))
    os.mkfifo(tmp_path / "pipe.ipynb")  # opening it for reading would block a plain open() forever
    workspace = Workspace(tmp_path)
    assert context_routes._read_notebook(workspace, "a.ipynb") == {"cells": [], "nbformat": 4}
    with pytest.raises(ToolError, match="not a regular notebook file"):
        context_routes._read_notebook(workspace, "pipe.ipynb")
    with pytest.raises(ToolError, match="no such notebook"):
        context_routes._read_notebook(workspace, "gone.ipynb")


def test_a_notebook_over_the_cap_is_refused(tmp_path, monkeypatch):
    (tmp_path / "big.ipynb").write_text(json.dumps({"cells": ["x" * 100]}))
    monkeypatch.setattr(context_routes, "NOTEBOOK_MAX_BYTES", 50)
    with pytest.raises(ToolError, match="over 50 MB"):
        context_routes._read_notebook(Workspace(tmp_path), "big.ipynb")
