"""Helpers for the workspace, file and search tool tests (a unique module name: test folders share sys.path)."""

from __future__ import annotations

import inspect
import subprocess
from pathlib import Path

from nbagent.testing import tool_context
from nbagent.tools.context import ToolContext


def make_ctx(root: Path, **config) -> ToolContext:
    return tool_context(root, state=False, **config)


async def call(ctx: ToolContext, tool, **args):
    """Run a tool as the loop does: validate the model's arguments, then call (awaiting if async)."""
    result = tool.fn(ctx, **tool.validate(args))
    return await result if inspect.isawaitable(result) else result


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


