"""The notebook stores in the order the tools ask them: a context's own, the registered ones, then the file.

nbagent.tools.nbdoc holds the document protocol and the registry of stores a Jupyter server (or a
kernel's link to one) puts before the file; the file store (nbagent.tools.nbfile) always answers
last. The notebook tools and checkpoints read, edit and run notebooks through here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ToolError
from .nbdoc import Snapshot, registered_stores
from .nbfile import FILE_STORE


def stores(ctx: Any = None) -> list[Any]:
    """The stores to ask in order: a context's own first, then registered ones, then the file."""
    return [*registered_stores(ctx), FILE_STORE]


def read(ctx: Any, path: Path, name: str, *, allow_missing: bool = False) -> Snapshot:
    for store in stores(ctx):
        snap = store.read(path, name, allow_missing=allow_missing)
        if snap is not None:
            return snap
    raise ToolError(f"{name}: no notebook store holds it")  # the file store always answers


def apply(ctx: Any, path: Path, name: str, ops: list[dict], *, allow_missing: bool = False) -> Snapshot:
    for store in stores(ctx):
        snap = store.apply(path, name, ops, allow_missing=allow_missing)
        if snap is not None:
            return snap
    raise ToolError(f"{name}: no notebook store holds it")


def run(ctx: Any, path: Path, name: str, cell_ids: list[str], *, watch: dict | None = None) -> dict:
    """Run cells in the notebook's kernel through the first store that can: {"cells": [...], "note"?}.

    ``watch``: the arguments of the kernel's record of the run (nbagent.checkpoints.remote_ledger), for a
    store that runs them by messages; its result then holds "kernel_id" and "kernel_record"."""
    for store in stores(ctx):
        runner = getattr(store, "run", None)
        result = None if runner is None else runner(path, name, cell_ids, **({"watch": watch} if watch else {}))
        if result is not None:
            return result
    raise ToolError(f"cannot run cells of {name} from here: notebook_run needs the notebook open in a Jupyter "
                    "server that runs nbagent's server extension (JupyterLab with the nbagent panel). Use "
                    "kernel_run or the shell to run code instead.")


def check_run(ctx: Any, path: Path, name: str) -> None:
    """Raise the ToolError a run of ``name``'s cells would end in, where a store can tell beforehand
    (the agent's own kernel, no kernel): notebook_run's approval card is then never shown."""
    for store in stores(ctx):
        check = getattr(store, "check_run", None)
        if check is not None and check(path, name) is not None:
            return
