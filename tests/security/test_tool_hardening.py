"""Findings 7, 9 and 11: globs cannot freeze the process, FIFOs are refused, secrets stay in the kernel."""

from __future__ import annotations

import os
import time

import pytest

from nbagent.errors import ToolError
from nbagent.tools.files import glob
from nbagent.tools.listing import MAX_ALTERNATIVES, glob_regex
from nbagent.tools.notebook import notebook_delete_preview, notebook_read


@pytest.mark.process
def test_a_backtracking_glob_answers_at_once(ctx):
    deep = ctx.workspace.root.joinpath(*["a" * 250] * 12)
    deep.mkdir(parents=True)
    (deep / ("a" * 250)).write_text("x")
    (ctx.workspace.root / ("a" * 249 + "c")).write_text("x")
    started = time.monotonic()
    assert glob(ctx, "*a*a*a*a*a*a*a*a*a*a*a*a*b").startswith("No files match")
    assert glob(ctx, "**/*a*a*a*a*a*a*a*a*a*a*a*a*b").startswith("No files match")
    assert glob(ctx, "**/a*a*a*a*a*a*a*a*a*a*a*a/**/" + "*a" * 40 + "*").count("\n") == 0
    assert time.monotonic() - started < 2.0


def test_brace_expansion_is_capped(ctx):
    with pytest.raises(ToolError, match=f"more than {MAX_ALTERNATIVES}"):
        glob(ctx, "{a,b}" * 20)
    with pytest.raises(ToolError, match="at most"):
        glob_regex("a" * 5000)
    assert len(glob_regex("*.{py,md,txt}").pattern) > 0


@pytest.mark.process
def test_globs_still_mean_what_they_did(ctx):
    root = ctx.workspace.root
    (root / "src" / "pkg").mkdir(parents=True)
    for name in ["src/a.py", "src/pkg/b.py", "README.md", "odd name (1).txt", "src/pkg/c.ts", "x+y.py"]:
        (root / name).write_text("x")
    assert glob(ctx, "**/*.py").splitlines() == ["src/a.py", "src/pkg/b.py", "x+y.py"]
    assert glob(ctx, "*.{md,txt}").splitlines() == ["README.md", "odd name (1).txt"]
    assert glob(ctx, "src/*/[bc].?s") == "src/pkg/c.ts"
    assert glob(ctx, "src/*/[!b].*") == "src/pkg/c.ts"
    assert glob(ctx, "x+y.py") == "x+y.py"


@pytest.mark.process
def test_glob_matches_names_that_are_not_utf8(ctx):
    name = os.fsencode(str(ctx.workspace.root)) + b"/caf\xe9.txt"
    with open(name, "wb") as f:
        f.write(b"x")
    assert glob(ctx, "caf*.txt").startswith("caf")


@pytest.fixture
def fifo_notebook(ctx):
    path = ctx.workspace.root / "pipe.ipynb"
    os.mkfifo(path)
    return path


def test_notebook_read_and_preview_refuse_a_fifo(ctx, fifo_notebook):
    with pytest.raises(ToolError, match="not a regular file"):
        notebook_read(ctx, "pipe.ipynb")
    with pytest.raises(ToolError, match="not a regular file"):
        notebook_delete_preview(ctx, "pipe.ipynb", "abc")


def test_kernel_inspect_refuses_modules_contents_and_the_environment(ctx):
    import json as json_module
    import os as os_module

    from nbagent.tools.kernel import KernelBridge, kernel_inspect

    env_copy = os_module.environ
    ctx.kernel = KernelBridge({"os": os_module, "json": json_module, "env": env_copy, "data": {"a": [1, 2]}})
    for expr in ("os.environ", "os.environ['HOME']", "env", "json.decoder", "os.path.sep"):
        with pytest.raises(ToolError, match="module|environment"):
            kernel_inspect(ctx, expr)
    assert "module" in kernel_inspect(ctx, "os")  # the module itself: its name, not its contents
    assert "2" in kernel_inspect(ctx, "data['a']")


def test_kernel_inspect_reaches_the_users_variables_not_the_kernels_key(ctx):
    """Issue 26, finding 6: ``exit._ip.kernel.session.key`` was the kernel's HMAC key, shown without asking."""
    from jupyter_client.session import Session
    from traitlets.config import Config

    from nbagent.tools.kernel import KernelBridge, kernel_inspect

    class Kernel:  # stands where ipykernel's kernel stands: the session is jupyter_client's real one
        def __init__(self):
            self.session = Session(key=b"hmac-secret-key")

    class Holder:
        def __init__(self):
            self.session = Session(key=b"hmac-secret-key")
            self.settings = Config({"Session": {"key": "hmac-secret-key"}})
            self._ip = type("Shell", (), {"kernel": Kernel()})()
            self.rows = [1, 2]

    ctx.kernel = KernelBridge({"exit": Holder(), "holder": Holder(), "_": Holder(), "__builtins__": {}})
    for expr in ("exit._ip.kernel.session.key", "exit", "holder._ip.kernel", "holder.session.key",
                 "holder.session", "holder.settings", "holder.settings.Session", "_.rows", "__builtins__"):
        with pytest.raises(ToolError, match="kernel's own|private|not one of the user's"):
            kernel_inspect(ctx, expr)
    assert "[1, 2]" in kernel_inspect(ctx, "holder.rows")
    assert "hmac-secret-key" not in kernel_inspect(ctx, "holder")
