"""grep: ripgrep (from the PyPI ``ripgrep`` wheel) run as a fixed argv, never through a shell.

It honours the same ignore rules as the workspace walk (nbagent.workspace.walker), prints
``path:line:text`` relative to the workspace root, and stops reading (and stops
rg) once ``max_results`` matching lines are in, saying so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

from pydantic import Field

from ..errors import ToolError
from ..workspace.walker import find_rg, rg_ignore_args
from .base import function_tool
from .context import ToolContext

DEFAULT_MAX_RESULTS = 200
MAX_COLUMNS = 400
"""Longer lines are shown as a preview of this many characters."""


def grep_argv(
    rg: str, root: Path, pattern: str, target: str, glob: str | None, ignore_case: bool, context: int
) -> list[str]:
    """The fixed argv: every value from the model is one argument, after the option it belongs to."""
    argv = [
        rg, "--null", "--line-number", "--with-filename", "--no-heading", "--color=never",
        f"--max-columns={MAX_COLUMNS}", "--max-columns-preview", "--max-filesize=256M", *rg_ignore_args(root),
    ]
    if ignore_case:
        argv.append("--ignore-case")
    if context:
        argv.append(f"--context={context}")
    if glob:
        argv += ["--glob", glob]
    argv += ["--regexp", pattern, "--"]
    return argv + ([] if target == "." else [target])


async def grep(
    ctx: ToolContext,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
    context: Annotated[int, Field(ge=0, le=20)] = 0,
    max_results: Annotated[int, Field(ge=1, le=5000)] = DEFAULT_MAX_RESULTS,
) -> str:
    """Search file contents with a regular expression (ripgrep syntax), skipping files .gitignore ignores.

    Args:
        pattern: Regular expression, e.g. "def \\w+_tool" or "TODO|FIXME". Escape regex characters for literal text.
        path: File or directory to search.
        glob: Only files matching this glob, e.g. "*.py" or "src/**/*.ts".
        ignore_case: Match letters in either case.
        context: Lines to show before and after each match.
        max_results: Most matching lines to return.
    """
    rg = find_rg()
    if rg is None:
        raise ToolError("grep needs ripgrep, which is not installed: pip install ripgrep")
    real = ctx.workspace.resolve(path)
    if not real.exists():
        raise ToolError(f"{path} does not exist in the workspace {ctx.workspace.root}")
    if not (real.is_dir() or real.is_file()):  # ripgrep would wait on a FIFO forever
        raise ToolError(f"{path} is not a regular file (a pipe, socket or device): grep searches files")
    target = ctx.workspace.rel(real)
    argv = grep_argv(rg, ctx.workspace.root, pattern, target, glob, ignore_case, context)
    lines, capped, code, err = await _run(argv, ctx.workspace.root, max_results)
    where = "the workspace" if target == "." else target
    if code == 2 and not lines:
        if "No files were searched" in err:
            return f"No files to search in {where}" + (f" match the glob {glob!r}" if glob else "") + (
                " (files ignored by .gitignore are skipped)"
            )
        raise ToolError(f"grep failed: {err.strip() or 'rg exited with status 2'}")
    if not lines:
        return f"No matches for {pattern!r} in {where}" + (f" (files matching {glob})" if glob else "")
    out = "\n".join(lines)
    if code == 2 and err.strip():
        out += f"\n[some files could not be searched: {err.strip().splitlines()[0]}]"
    if capped:
        out += (
            f"\n[stopped after {max_results} matching lines; there are more: narrow the pattern, "
            "path or glob, or raise max_results]"
        )
    return out


async def _run(argv: list[str], cwd: Path, max_results: int) -> tuple[list[str], bool, int, str]:
    """Read rg's output until ``max_results`` matches; (lines, capped, exit code, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=1 << 20,
    )
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes
    # stderr is drained alongside stdout, so a flood of warnings can never block rg.
    stderr = asyncio.ensure_future(proc.stderr.read())
    lines: list[str] = []
    matches, capped = 0, False
    try:
        async for raw in proc.stdout:
            line = raw.decode("utf-8", "backslashreplace").rstrip("\n")
            name, nul, rest = line.partition("\0")
            if not nul:  # the "--" between separated context groups
                lines.append(line)
                continue
            digits = len(rest) - len(rest.lstrip("0123456789"))
            if rest[digits:digits + 1] == ":":  # "12:text" is a match, "12-text" context
                matches += 1
                if matches > max_results:
                    capped = True
                    break
                lines.append(f"{name}:{rest}")
            else:
                lines.append(f"{name}-{rest}")
    except BaseException:  # cancelled with the turn: rg must not outlive it
        proc.kill()
        await proc.wait()
        stderr.cancel()
        raise
    if capped and proc.returncode is None:
        proc.kill()
    err = (await stderr).decode("utf-8", "replace")
    code = await proc.wait()
    while lines and lines[-1] == "--":
        lines.pop()
    return lines, capped, code, err


GREP_TOOL = function_tool(
    grep, read_only=True,
    prompt_hint="grep to find where text or a symbol occurs; read_file the hits you need.",
)
