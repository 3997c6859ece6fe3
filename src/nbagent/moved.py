"""Old import paths of modules that moved, kept working: ``import nbagent.agent_state`` still imports it.

Round three gave the package folders that show its layers (docs/internals.md, "Layout"). Code and
docs written before then import modules by their old dotted paths; an import hook installed by
``nbagent/__init__.py`` answers each old path with the module at its new one (the same module
object, so ``monkeypatch.setattr("nbagent.agent_state.X", ...)`` patches the real one). nbagent's own
code never uses an old path (tests/engine/test_import_boundary.py).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

MOVED: dict[str, str] = {
    "nbagent.agent": "nbagent.engine.agent",
    "nbagent.agent_state": "nbagent.engine.agent_state",
    "nbagent.runtime": "nbagent.engine.runtime",
    "nbagent.loop": "nbagent.engine.loop",
    "nbagent.prompt": "nbagent.engine.prompt",
    "nbagent.compaction": "nbagent.engine.compaction",
    "nbagent.profiles": "nbagent.engine.profiles",
    "nbagent.result": "nbagent.engine.result",
    "nbagent.warmup": "nbagent.engine.warmup",
    "nbagent.open_context": "nbagent.engine.open_in_jupyter",
    "nbagent.context.handle": "nbagent.engine.attached_handle",
    "nbagent.context": "nbagent.attached",
    "nbagent.approvals": "nbagent.tools.approvals",
    "nbagent.api": "nbagent.store.views",
    "nbagent.session": "nbagent.session.model",
    "nbagent.message_log": "nbagent.session.message_log",
    "nbagent.cost": "nbagent.model.cost",
    "nbagent.journal": "nbagent.checkpoints.journal",
    "nbagent.turn_guard": "nbagent.checkpoints.turn_guard",
    "nbagent.workspace": "nbagent.workspace.root",
    "nbagent.walker": "nbagent.workspace.walker",
    "nbagent.picker": "nbagent.workspace.picker",
    "nbagent.statedir": "nbagent.workspace.state_dir",
    "nbagent.atomic": "nbagent.workspace.atomic",
    "nbagent.tempfiles": "nbagent.workspace.tempfiles",
    "nbagent.procs": "nbagent.workspace.procs",
    "nbagent.redaction": "nbagent.render.redaction",
    "nbagent.display": "nbagent.render.text",
    "nbagent.safe_markdown": "nbagent.render.markdown",
    "nbagent.terminal": "nbagent.cli.terminal",
    "nbagent.cli": "nbagent.cli.app",
    "nbagent.cli_batch": "nbagent.cli.batch",
    "nbagent.cli_checkpoints": "nbagent.cli.checkpoints",
    "nbagent.cli_context": "nbagent.cli.attached",
    "nbagent.cli_knowledge": "nbagent.cli.knowledge",
    "nbagent.cli_mcp": "nbagent.cli.mcp",
    "nbagent.cli_sessions": "nbagent.cli.sessions",
    "nbagent.jupyter.batch_progress": "nbagent.jupyter.widgets.batch_progress",
    "nbagent.jupyter.commands": "nbagent.jupyter.kernel.commands",
    "nbagent.jupyter.context_command": "nbagent.jupyter.kernel.attached_command",
    "nbagent.jupyter.frontend": "nbagent.jupyter.kernel.frontend",
    "nbagent.jupyter.kernel_agent": "nbagent.jupyter.kernel.agent_keeper",
    "nbagent.jupyter.kernel_bridge": "nbagent.jupyter.kernel.bridge",
    "nbagent.jupyter.kernel_context": "nbagent.jupyter.kernel.history_source",
    "nbagent.jupyter.kernel_probe": "nbagent.jupyter.kernel.probe",
    "nbagent.jupyter.magics": "nbagent.jupyter.kernel.magics",
    "nbagent.jupyter.notebook_path": "nbagent.jupyter.kernel.notebook_path",
    "nbagent.jupyter.options": "nbagent.jupyter.kernel.options",
    "nbagent.jupyter.text_view": "nbagent.jupyter.kernel.text_view",
    "nbagent.jupyter.view": "nbagent.jupyter.kernel.view",
    "nbagent.jupyter.view_registry": "nbagent.jupyter.kernel.view_registry",
    "nbagent.jupyter.server_link": "nbagent.jupyter.kernel.server_client",
    "nbagent.jupyter.server_kernel": "nbagent.jupyter.remote.kernel",
    "nbagent.jupyter.served_kernel": "nbagent.jupyter.remote.kernel_tools",
    "nbagent.jupyter.server.kernel_link": "nbagent.jupyter.server.kernel_secret",
}
"""Old dotted path -> new one. A moved package maps its submodules too (nbagent.context.store ->
nbagent.attached.store); the longest matching old prefix wins."""


def new_path(name: str) -> str | None:
    """Where the module once imported as ``name`` lives now (None: it did not move)."""
    best = max((old for old in MOVED if name == old or name.startswith(old + ".")), key=len, default=None)
    return None if best is None else MOVED[best] + name[len(best):]


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        pass  # the module at the new path has run already


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds an old path's module at its new path (only names that are not modules of their own now)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("nbagent."):
            return None
        target_name = new_path(fullname)
        if target_name is None or target_name == fullname:
            return None
        # An old name that is a real module again (nbagent.session, nbagent.workspace, nbagent.cli are
        # packages now) is found by the normal finders.
        if importlib.machinery.PathFinder.find_spec(fullname, path) is not None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(target_name))


def install() -> None:
    """Put the finder on sys.meta_path once (after the normal finders: real modules win)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())
