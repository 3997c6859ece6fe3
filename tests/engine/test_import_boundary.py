"""The import rules of docs/internals.md: the core never imports a Jupyter front end's libraries (checked
in a fresh process), and a lower layer never imports an upper one (scripts/gen_internals.py's LAYERS)."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

FRONT_END = ("IPython", "ipywidgets", "traitlets", "tornado", "jupyter_server")
CORE = ["nbagent", "nbagent.agent", "nbagent.loop", "nbagent.runtime", "nbagent.tools.runner", "nbagent.cli",
        "nbagent.model.chat", "nbagent.model.responses", "nbagent.tools", "nbagent.testing.scripted",
        "nbagent.testing.server"]


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
