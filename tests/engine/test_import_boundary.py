"""The core never imports a Jupyter front end's libraries (checked in a fresh process)."""

from __future__ import annotations

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
