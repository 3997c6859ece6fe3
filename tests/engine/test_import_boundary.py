"""The import rules of docs/internals.md: the core never imports a Jupyter front end's libraries (checked
in a fresh process), and a lower layer never imports an upper one (scripts/gen_internals.py's LAYERS)."""

from __future__ import annotations

import pytest
import importlib.util
import pathlib
import subprocess
import sys

FRONT_END = ("IPython", "ipywidgets", "traitlets", "tornado", "jupyter_server")
CORE = ["nbagent", "nbagent.engine.agent", "nbagent.engine.loop", "nbagent.engine.runtime", "nbagent.tools.runner",
        "nbagent.cli", "nbagent.cli.app", "nbagent.model.chat", "nbagent.model.responses", "nbagent.tools",
        "nbagent.testing.scripted", "nbagent.testing.server"]


@pytest.mark.process
def test_core_imports_no_front_end_library():
    code = (
        "import importlib, sys\n"
        f"for name in {CORE!r}: importlib.import_module(name)\n"
        "from nbagent.tools import builtin_toolsets\n"
        "builtin_toolsets(kernel=object())\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FRONT_END!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"the core imported: {out.stdout.strip()}"


def _gen_internals():
    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "gen_internals.py"
    spec = importlib.util.spec_from_file_location("gen_internals", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_internals", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_lower_layers_never_import_upper_ones():
    gen = _gen_internals()
    upward = []
    for module in gen.modules():
        layer = gen.layer_index(module.name)
        for imported, line in gen.imports_of(module):
            if gen.layer_index(imported) > layer and (module.name, imported) not in gen.UPWARD_EXCEPTIONS:
                upward.append(f"{module.path.relative_to(gen.ROOT)}:{line} ({gen.LAYERS[layer][0]}) imports "
                              f"{imported} ({gen.LAYERS[gen.layer_index(imported)][0]})")
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)


def test_the_layer_check_sees_relative_lazy_and_type_only_imports(tmp_path, monkeypatch):
    gen = _gen_internals()
    package = tmp_path / "nbagent" / "tools"
    package.mkdir(parents=True)
    (tmp_path / "nbagent" / "__init__.py").write_text("")
    (tmp_path / "nbagent" / "agent.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "x.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .. import agent\nif TYPE_CHECKING:\n    from ..cli import main\n"
        "def f():\n    from nbagent.jupyter import view\n")
    monkeypatch.setattr(gen, "SRC", tmp_path)
    module = gen.Module("nbagent.tools.x", package / "x.py", "x")
    assert gen.imports_of(module) == [("nbagent.agent", 2), ("nbagent.jupyter", 6)]


def test_no_import_cycles_type_only_imports_included():
    gen = _gen_internals()
    graph = gen.import_graph(type_only=True)
    cycles = gen.cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_check_finds_a_type_only_cycle(tmp_path, monkeypatch):
    gen = _gen_internals()
    package = tmp_path / "nbagent"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    monkeypatch.setattr(gen, "SRC", tmp_path)
    assert gen.cycles(gen.import_graph(type_only=True)) == [["nbagent.a", "nbagent.b"]]
    assert gen.cycles(gen.import_graph(type_only=False)) == []


def test_at_most_twelve_modules_sit_directly_in_the_package():
    top = sorted(p.name for p in (pathlib.Path(__file__).resolve().parents[2] / "src" / "nbagent").glob("*.py"))
    assert len(top) <= 12, top


def test_nbagents_own_code_never_imports_an_old_path():
    from nbagent.moved import new_path

    gen = _gen_internals()
    stale = [f"{m.path.relative_to(gen.ROOT)}:{line} imports {name}" for m in gen.modules()
             for name, line in gen.imports_of(m, type_only=True) if not gen._is_module(name)
             and new_path(name) not in (None, name)]
    assert not stale, "\n".join(stale)


@pytest.mark.process
def test_old_import_paths_still_import_the_moved_modules():
    code = (
        "import importlib\n"
        "from nbagent.moved import MOVED\n"
        "import nbagent.agent_state as old, nbagent.engine.agent_state as new\n"
        "assert old is new and old.reduce is new.reduce\n"
        "from nbagent.jupyter.kernel_bridge import bridge_from_shell\n"
        "from nbagent.cost import cost_of\n"
        "from nbagent.tools.limits import limit_output\n"
        "from nbagent.approvals import Approvals\n"
        "from nbagent.session import Session, SessionState, open_state\n"
        "from nbagent.workspace import Workspace\n"
        "for old_name in MOVED: importlib.import_module(old_name)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
