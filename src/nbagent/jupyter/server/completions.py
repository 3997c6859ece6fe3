"""The server's completion service: its completer, and what the server adds to a completion's context.

The notebook's other cells come as the server holds them (the live document or the open view); the
names of the kernel that runs the notebook are read there by one silent probe line
(nbagent.jupyter.kernel.probe, action "names") and kept a few seconds, refreshed in the background.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ...complete.completer import Completer
from ...complete.prompt import CompletionRequest
from ...errors import ToolError
from ...render.redaction import logger

log = logger("nbagent.server")

NAMES_FRESH = 2.0
"""Seconds the kernel's names are used without asking again (a background refresh after that)."""
NAMES_TIMEOUT = 2.0
"""Seconds the first probe of a kernel may take before a completion goes without its names."""


class CompletionService:
    """The server's completer (rebuilt when the agents' settings change) and the kernels' names."""

    def __init__(self, app: Any):
        self.app = app
        self._completer: Completer | None = None
        self._options: dict[str, Any] | None = None
        self._names: dict[str, tuple[float, dict | None]] = {}
        """Per notebook path: when its kernel's names were read, and the names (None: no kernel)."""
        self._refreshing: dict[str, asyncio.Task] = {}

    def completer(self) -> Completer:
        from ...config import AgentConfig

        options = {**self.app.agent_options, **self.app.agent_settings.agent_options()}
        if self._completer is None or options != self._options:
            known = {k: v for k, v in options.items() if k in AgentConfig.__dataclass_fields__}
            config = AgentConfig.load(workspace=self.app.services.root, **known)
            self._completer, self._options = Completer(config, self.app.services.root), options
        return self._completer

    async def request(self, body: dict[str, Any]) -> CompletionRequest:
        path, cell_id = body["path"], body.get("cell_id")
        before, after = await self._cells(path, cell_id)
        names = await self._kernel_names(path) if path.endswith(".ipynb") else None
        return CompletionRequest(prefix=body["prefix"], suffix=body["suffix"], path=path, cells_before=before,
                                 cells_after=after, names=names)

    async def _cells(self, path: str, cell_id: str | None) -> tuple[list[dict], list[dict]]:
        if not path.endswith(".ipynb") or not cell_id:
            return [], []
        workspace = self.app.services.workspace
        try:
            real = workspace.resolve(path)
            rel = workspace.rel(real)
            cells = (await self.app.notebooks.aread(rel, real, rel)).notebook.get("cells") or []
        except (ToolError, OSError, ValueError) as exc:
            log.info("nbagent: completion without the notebook's cells (%s): %s", path, exc)
            return [], []
        at = next((i for i, c in enumerate(cells) if c.get("id") == cell_id), None)
        if at is None:
            return [], []
        return cells[:at], cells[at + 1:]

    async def _kernel_names(self, path: str) -> dict | None:
        """The names of the kernel running ``path``: fresh ones at once (no lookup of the kernel either);
        stale ones while a refresh runs in the background; the first ones waited for, briefly."""
        seen = self._names.get(path)
        if seen is not None and time.monotonic() - seen[0] < NAMES_FRESH:
            return seen[1]
        task = self._refreshing.get(path)
        if task is None or task.done():
            task = asyncio.ensure_future(self._refresh(path))
            self._refreshing[path] = task
        if seen is not None:
            return seen[1]
        try:
            return await asyncio.wait_for(asyncio.shield(task), NAMES_TIMEOUT)
        except asyncio.TimeoutError:
            return None

    async def _refresh(self, path: str) -> dict | None:
        from ..remote.kernel import LocalKernel

        try:
            kernel = await LocalKernel.find(self.app.serverapp, path)
        except ToolError:
            names = None  # no kernel runs this notebook (now): no names
        else:
            names = await self._probe(kernel)
            if names is None and path in self._names:
                names = self._names[path][1]  # a busy kernel: keep the last names rather than none
        self._names[path] = (time.monotonic(), names)
        return names

    async def _probe(self, kernel: Any) -> dict | None:
        from ..kernel.probe import answer_of, probe_code

        names = None
        try:
            if not await kernel.busy():  # the probe would wait behind the user's code
                outcome = await asyncio.wait_for(kernel.execute(probe_code("names"), silent=True), 10)
                answer = answer_of(outcome.get("stdout") or "") or {}
                names = answer.get("names") if isinstance(answer.get("names"), dict) else None
        except (ToolError, asyncio.TimeoutError) as exc:
            log.info("nbagent: kernel names not read for a completion: %s", exc)
        return names
