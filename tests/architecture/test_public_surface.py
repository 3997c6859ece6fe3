"""The public surface is the short list docs/python-api.md gives ("Public modules"), and it holds.

Each listed module imports, its ``__all__`` is exactly the names the table documents, and every one of
them resolves; the docs' examples and the example notebooks import from listed modules only, and only
listed names; the Agent methods python-api.md names exist; ``nbagent.moved`` is gone.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest
from tests.paths import CHECKOUT

ROOT = CHECKOUT
API_DOC = ROOT / "docs" / "python-api.md"
ROW = re.compile(r"^\| `(nbagent[\w.]*)` \| (.+) \|$")
TICKED = re.compile(r"`([A-Za-z_]\w*)`")
FROM_IMPORT = re.compile(r"^\s*from (nbagent[\w.]*) import ([\w, ]+)", re.M)
PLAIN_IMPORT = re.compile(r"^\s*import (nbagent[\w.]*)", re.M)


def documented() -> dict[str, set[str]]:
    """Module -> the names its row of the "Public modules" table lists."""
    text = API_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Public modules\n", 1)[1].split("\n## ", 1)[0]
    table = {}
    for line in section.splitlines():
        row = ROW.match(line)
        if row:
            table[row.group(1)] = set(TICKED.findall(row.group(2)))
    return table


PUBLIC = documented()


def test_the_table_lists_the_package_and_a_short_list_of_modules():
    assert "nbagent" in PUBLIC
    assert 2 <= len(PUBLIC) <= 12, sorted(PUBLIC)  # a short list, not every module path


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_a_public_module_exports_exactly_its_documented_names(module_name):
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{module_name} has no __all__"
    assert len(exported) == len(set(exported)), f"{module_name}.__all__ repeats a name"
    assert set(exported) == PUBLIC[module_name], (
        f"{module_name}: in __all__ only {sorted(set(exported) - PUBLIC[module_name])}, "
        f"in docs/python-api.md only {sorted(PUBLIC[module_name] - set(exported))}")
    for name in exported:
        assert not name.startswith("_") or (name.startswith("__") and name.endswith("__")), name
        assert getattr(module, name) is not None, f"{module_name}.{name} does not resolve"


def examples() -> list[tuple[str, str]]:
    """(where, code) of what people are shown: the docs pages (not the internals map), the README and the
    example notebooks' code cells."""
    found = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "docs").glob("*.md"))
             if p.name != "internals.md"]
    found.append(("README.md", (ROOT / "README.md").read_text(encoding="utf-8")))
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        found += [(notebook.name, "".join(c["source"])) for c in cells if c["cell_type"] == "code"]
    return found


def test_docs_and_notebooks_import_only_public_modules_and_names():
    wrong = []
    imports = 0
    for where, code in examples():
        for module_name, names in FROM_IMPORT.findall(code):
            imports += 1
            if module_name not in PUBLIC:
                wrong.append(f"{where}: from {module_name} (not a public module)")
                continue
            wrong += [f"{where}: {module_name}.{n} (not in its __all__)"
                      for n in (n.strip() for n in names.split(",")) if n and n not in PUBLIC[module_name]]
        for module_name in PLAIN_IMPORT.findall(code):
            imports += 1
            if module_name not in PUBLIC:
                wrong.append(f"{where}: import {module_name} (not a public module)")
    assert imports >= 10, "the examples were not found"
    assert wrong == []


def test_the_agent_calls_the_api_page_names_exist():
    from nbagent.engine.agent import Agent

    named = set(re.findall(r"(?<![\w.])agent\.(\w+)", API_DOC.read_text(encoding="utf-8")))
    assert {"undo", "redo", "checkpoints", "diff", "resume", "fork", "new_session"} <= named
    assert sorted(n for n in named if not hasattr(Agent, n)) == []


def test_the_checkpoint_and_session_calls_keep_their_signatures():
    from nbagent.engine.agent import Agent

    shapes = {name: str(inspect.signature(getattr(Agent, name))) for name in (
        "undo", "redo", "checkpoints", "kernel_changes", "replay", "diff", "new_session", "resume", "fork")}
    assert shapes == {
        "undo": "(self, force: 'bool' = False, turn: 'int | None' = None)",
        "redo": "(self, force: 'bool' = False, turn: 'int | None' = None)",
        "checkpoints": "(self)",
        "kernel_changes": "(self, turn: 'int | None' = None)",
        "replay": "(self, cells=None)",
        "diff": "(self, turn: 'int') -> 'str'",
        "new_session": "(self) -> 'str'",
        "resume": "(self, selector: 'str') -> 'str'",
        "fork": "(self, up_to_turn: 'int | None' = None) -> 'str'",
    }
    assert isinstance(inspect.getattr_static(Agent, "replay_offered"), property)


def test_the_old_paths_hook_is_gone():
    import nbagent

    assert importlib.util.find_spec("nbagent.moved") is None
    assert not hasattr(nbagent, "moved")
