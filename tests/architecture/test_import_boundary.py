"""The import rules of docs/internals.md: the core never imports a Jupyter front end's libraries (checked
in a fresh process); over folders (scripts/gen_internals.py's LAYERS), no import points up a layer and no
folders import each other round a loop, every import counted (in functions and type-only ones too), with
at most one documented exception."""

from __future__ import annotations

import functools
import importlib.util
import pathlib
import subprocess
import sys

import pytest
from tests.paths import CHECKOUT

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


@functools.cache
def _gen_internals():
    """scripts/gen_internals.py, loaded once: its parsed modules are kept between the tests."""
    path = CHECKOUT / "scripts" / "gen_internals.py"
    spec = importlib.util.spec_from_file_location("gen_internals", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_internals", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True, scope="module")
def _forget_the_parsed_modules_afterwards():
    """The syntax trees of every module are hundreds of thousands of objects: kept for the rest of the
    run, each full garbage collection of the pytest worker walked them again (seconds over a run)."""
    yield
    if _gen_internals.cache_info().currsize:
        _gen_internals()._parse_version.cache_clear()
        _gen_internals.cache_clear()
    sys.modules.pop("gen_internals", None)


def test_every_folder_has_a_layer():
    gen = _gen_internals()
    assert gen.unplaced_folders() == []


def test_no_folder_imports_one_of_a_higher_layer():
    gen = _gen_internals()
    upward = gen.upward_imports()
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)


def test_no_loop_between_folders():
    gen = _gen_internals()
    loops = gen.folder_loops()
    assert not loops, "folders importing each other round a loop:\n" + "\n".join(" <-> ".join(c) for c in loops)


def test_at_most_one_documented_exception_and_it_is_still_needed():
    gen = _gen_internals()
    assert len(gen.UPWARD_EXCEPTIONS) <= 1 and all(why.strip() for why in gen.UPWARD_EXCEPTIONS.values())
    for module_name, imported in gen.UPWARD_EXCEPTIONS:
        module = next(m for m in gen.modules() if m.name == module_name)
        assert imported in [name for name, _ in gen.imports_of(module, type_only=True)], (module_name, imported)


def _tree(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / "nbagent" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in [tmp_path / "nbagent", *(p for p in (tmp_path / "nbagent").rglob("*") if p.is_dir())]:
        (folder / "__init__.py").touch()


def test_the_folder_check_finds_an_upward_import_in_a_function_and_a_loop(tmp_path, monkeypatch):
    gen = _gen_internals()
    _tree(tmp_path, {"render/a.py": "def f():\n    from ..engine import b\n",
                     "engine/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..tools import c\n",
                     "tools/c.py": "from ..engine.b import x\n",
                     "jupyter/kernel/k.py": "from ..widgets import w\n", "jupyter/widgets/w.py": "from ..kernel import k\n"})
    monkeypatch.setattr(gen, "SRC", tmp_path)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "DATA_FOLDERS", ())
    upward = [u.partition(" (")[0] for u in gen.upward_imports()]
    assert upward == ["nbagent/jupyter/widgets/w.py:1 imports nbagent.jupyter.kernel.k",
                      "nbagent/render/a.py:2 imports nbagent.engine.b",  # inside a function
                      "nbagent/tools/c.py:1 imports nbagent.engine.b"]
    assert sorted(gen.folder_loops()) == [["engine/", "tools/"], ["jupyter/kernel/", "jupyter/widgets/"]]


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
    top = sorted(p.name for p in (CHECKOUT / "src" / "nbagent").glob("*.py"))
    assert len(top) <= 12, top


@pytest.mark.process
def test_the_old_import_paths_are_gone():
    code = ("import importlib, nbagent\n"
            "for old in ('nbagent.moved', 'nbagent.agent_state', 'nbagent.cli.terminal', 'nbagent.store.memory',\n"
            "            'nbagent.session.state', 'nbagent.knowledge.memory_index', 'nbagent.mcp.serve'):\n"
            "    try:\n        importlib.import_module(old)\n    except ModuleNotFoundError:\n        continue\n"
            "    print(old)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"still importable: {out.stdout.strip()}"
