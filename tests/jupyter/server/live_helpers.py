"""Helpers for the live-notebook server tests: notebooks on disk, a tool context, waiting on conditions."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Callable

import nbformat

from nbagent.config import AgentConfig
from nbagent.tools.context import ToolContext
from nbagent.workspace.root import Workspace


def write_notebook(root, name: str, sources: list[tuple[str, str]], *, legacy: bool = False) -> list[str]:
    """Write ``name`` with (cell_type, source) cells; returns the cell ids (none stored if ``legacy``)."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [getattr(nbformat.v4, f"new_{kind}_cell")(source) for kind, source in sources]
    data = json.loads(nbformat.writes(nb))
    if legacy:
        data["nbformat_minor"] = 4
        for cell in data["cells"]:
            del cell["id"]
    (root / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    return [c.get("id") for c in data["cells"]]


def tool_ctx(root) -> ToolContext:
    return ToolContext(workspace=Workspace(root), config=AgentConfig.load(workspace=root),
                       emit=lambda event: None, processes=None)


async def until(condition: Callable[[], Any], timeout: float = 10.0, what: str = "the condition") -> Any:
    """Poll ``condition`` every 5 ms (the server runs on this same loop) until it is truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def sources(doc) -> list[str]:
    return [str(ycell["source"]) for ycell in doc.ycells]


def disk_sources(path) -> list[str]:
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # caught mid-write by the room's save
        return []
    return [c.source for c in nb.cells]


async def start_kernel(jp_fetch, path: str) -> str:
    """Open a kernel session for ``path`` as JupyterLab does; returns the kernel id once it answers."""
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(
        {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}))
    return json.loads(response.body)["kernel"]["id"]


RUN_CELLS = [("code", "x = 21"), ("code", "print(x * 2)\nx"), ("code", "1 / 0"), ("code", "print('after')")]


def check_run_result(text: str, ids: list[str]) -> None:
    assert f'<cell id="{ids[1]}" exec="2" status="ok">' in text
    assert "42" in text and "ZeroDivisionError" in text
    assert "stopped at the failing cell: 1 cell(s) not run" in text and "after" not in text
