"""A tool's class follows from what it does: every tool that runs without asking is called here, and
any program it starts other than nbagent's fixed ones (rg, git) fails the test; every tool that starts
code is never read-only, and ``nbagent mcp serve`` advertises the same (issue 35, finding 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from nbagent.testing import arun_tool, close_tool_context, tool_context
from nbagent.tools import builtin_toolsets
from nbagent.tools.kernel import KERNEL

FIXED_PROGRAMS = {"rg", "git"}
"""Programs nbagent starts with a fixed argv: they run no workspace code."""

_STARTED: list[list[str]] = []
_LISTENING: list[bool] = []


def _audit(event: str, args: tuple) -> None:
    if not _LISTENING:
        return
    if event == "subprocess.Popen":
        _STARTED.append([str(a) for a in (args[1] if isinstance(args[1], (list, tuple)) else [args[1]])])
    elif event in ("os.posix_spawn", "os.exec", "os.spawn"):
        _STARTED.append([str(a) for a in (args[1] if len(args) > 1 else [args[0]])])
    elif event == "os.system":
        _STARTED.append(["sh", "-c", str(args[0])])


sys.addaudithook(_audit)


def _workspace(root: Path) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n")
    nb = nbformat.v4.new_notebook()
    # a cell that would leave a mark if anything ran it
    nb.cells = [nbformat.v4.new_code_cell(f"open({str(root / 'ran.txt')!r}, 'w').write('ran')", id="c1")]
    nbformat.write(nb, root / "analysis.ipynb")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"], cwd=root,
                   check=True)


ARGUMENTS = {
    "read_file": {"path": "a.py"}, "glob": {"pattern": "*.py"}, "grep": {"pattern": "def"},
    "read_many_files": {"paths": ["a.py"]}, "list_dir": {},
    "task_wait": {"id": "t000000", "timeout": 0.1}, "task_get": {"id": "t000000"}, "task_list": {},
    "context_read": {"name": "nothing"}, "todo_write": {"todos": []},
    "git_status": {}, "git_diff": {}, "git_log": {}, "git_show": {"ref": "HEAD"}, "git_blame": {"path": "a.py"},
    "notebook_read": {"path": "analysis.ipynb"}, "notebook_check": {"path": "analysis.ipynb"},
    "recall": {"query": "anything"},
    "kernel_variables": {}, "kernel_inspect": {"name": "x"},
}
"""Arguments for each tool that runs unasked; a new such tool must be added here to be proven."""


def _unasked_tools():
    """Every built-in tool (the kernel set too) whose class lets it run without asking."""
    seen = {}
    for ts in [*builtin_toolsets(), KERNEL]:
        for tool in ts.tools:
            if tool.approval == "never" or tool.read_only:
                seen[tool.name] = tool
    return sorted(seen.values(), key=lambda t: t.name)


@pytest.fixture
def shell_bridge():
    from IPython.core.interactiveshell import InteractiveShell

    from nbagent.jupyter.kernel.bridge import bridge_from_shell

    shell = InteractiveShell.instance()
    shell.user_ns["x"] = 41
    yield bridge_from_shell(shell)
    InteractiveShell.clear_instance()  # one shell per process: the next test's must not hold this x


@pytest.mark.process  # git and rg; a tool classed wrongly would start a kernel here
@pytest.mark.kernel
@pytest.mark.parametrize("tool", _unasked_tools(), ids=lambda t: t.name)
async def test_a_tool_that_runs_unasked_starts_no_code(tool, tmp_path, shell_bridge):
    assert tool.name in ARGUMENTS, f"{tool.name} runs without asking: add its arguments to ARGUMENTS"
    _workspace(tmp_path)
    ctx = tool_context(tmp_path, approval="read-only", kernel=shell_bridge)
    _STARTED.clear()
    _LISTENING.append(True)
    try:
        try:
            await arun_tool(ctx, tool, **ARGUMENTS[tool.name])
        except Exception:
            pass  # a refusal is fine: what matters is what it started
    finally:
        _LISTENING.clear()
        close_tool_context(ctx)
    programs = [Path(argv[0]).name for argv in _STARTED]
    assert all(p in FIXED_PROGRAMS for p in programs), (
        f"{tool.name} is classed as changing nothing yet started {_STARTED}: a tool that starts code must "
        "say so (Tool.runs)")
    assert not (tmp_path / "ran.txt").exists()


def test_a_tool_that_runs_code_is_never_read_only():
    from nbagent.tools.base import function_tool

    def sneaky(ctx, path: str) -> str:
        """Says it is harmless.

        Args:
            path: Anything.
        """
        return path

    tool = function_tool(sneaky, read_only=True, runs="sandbox")
    assert not tool.read_only and tool.approval == "ask" and tool.effect == "run"
    every = {t.name: t for ts in [*builtin_toolsets(), KERNEL] for t in ts.tools}
    runs_code = {name for name, t in every.items() if t.runs}
    assert {"bash", "task_create", "notebook_run", "notebook_check", "kernel_run"} <= runs_code
    for name in runs_code:
        assert not every[name].read_only and every[name].approval != "never", name


def test_an_mcp_servers_tool_runs_code_whatever_its_trust(tmp_path):
    from types import SimpleNamespace

    from nbagent.mcp.config import MCPServerConfig
    from nbagent.mcp.tools import make_tools

    config = MCPServerConfig(name="s", command="x", trust={"*": "read"}, source="user")
    listed = [SimpleNamespace(name="peek", description="reads", input_schema={"type": "object"},
                              annotations=None)]
    (tool,) = make_tools(config, lambda *a: None, "s", listed, set())
    assert tool.runs == "outside" and not tool.read_only and tool.approval == "never"  # its trust: never asks
    ctx = tool_context(tmp_path, approval="read-only", state=False)
    try:
        import asyncio

        from nbagent.tools.approvals import Approvals

        decision = asyncio.run(Approvals(lambda: ctx.config, lambda e: None).decide(tool, ctx, {}))
    finally:
        close_tool_context(ctx)
    assert decision == "deny"  # read-only mode runs no other program's code, whatever its trust


@pytest.mark.integration
@pytest.mark.process
async def test_nbagent_mcp_serve_hints_match_what_tools_do(tmp_path):
    """The served tools' readOnlyHint comes from the same place: only tools proven above say read-only."""
    from mcp import Client, StdioServerParameters

    proven = {t.name for t in _unasked_tools() if t.read_only}
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "nbagent.cli", "mcp", "serve", "--workspace", str(tmp_path),
        "--toolsets", "core,edit-plus,git,notebook"], env=dict(os.environ))
    async with Client(params, mode="legacy") as client:
        listed = (await client.list_tools()).tools
    assert {t.name for t in listed} >= {"bash", "notebook_check", "notebook_run", "read_file"}
    for tool in listed:
        hint = bool(tool.annotations and tool.annotations.read_only_hint)
        assert hint == (tool.name in proven), (tool.name, hint, json.dumps(tool.annotations.model_dump()))
