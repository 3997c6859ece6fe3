"""Run inside a kernel around a call that comes through the Jupyter protocol: what it did to the namespace.

The MCP-served kernel_run (nbagent.jupyter.remote.kernel_tools) and a server-side notebook_run
(nbagent.jupyter.server.cell_runner) reach the kernel only by messages, so they send one fixed, silent
line before the call and one after; the namespace is compared here by the engine's own code
(nbagent.checkpoints.kernel_ledger) and the change comes back as one marked JSON line, as the probe's
answers do. Nothing is held for undo (no agent in this kernel could undo it): the record is shown, then
forgotten.
"""

from __future__ import annotations

import json
import threading
import weakref
from typing import Any

from ...checkpoints.kernel_ledger import KernelLedger, Snapshot
from .probe import MARK

_LEDGERS: "weakref.WeakKeyDictionary[Any, KernelLedger]" = weakref.WeakKeyDictionary()
_BEFORE: dict[str, Snapshot] = {}
_LOCK = threading.Lock()
MAX_PENDING = 16
"""Snapshots kept for calls whose "after" never came (a call cancelled mid-way): the oldest go first."""


def watch(shell: Any, action: str, key: str) -> None:
    """``before`` snapshots the namespace under ``key``; ``after`` compares and prints the change."""
    from .bridge import bridge_from_shell

    with _LOCK:
        ledger = _LEDGERS.get(shell)
        if ledger is None:
            ledger = _LEDGERS[shell] = KernelLedger(bridge_from_shell(shell, allow_run=False), max_bytes=0)
    if action == "before":
        with _LOCK:
            _BEFORE[key] = ledger.before()
            while len(_BEFORE) > MAX_PENDING:
                _BEFORE.pop(next(iter(_BEFORE)))
        return
    with _LOCK:
        snap = _BEFORE.pop(key, None)
    if snap is None:
        print(MARK + json.dumps({"error": "no snapshot before this call"}), flush=True)
        return
    record, _ = ledger.after(snap, 0, "", key)
    ledger.release()  # shown, not kept: nothing here can undo it
    change = {} if record is None else {k: getattr(record, k) for k in
                                        ("added", "rebound", "deleted", "mutated", "unchecked")}
    print(MARK + json.dumps({"change": change}), flush=True)


def watch_code(action: str, key: str) -> str:
    """The one line sent to the kernel (``key`` as a JSON literal, so it is data, not code)."""
    return (f"__import__('nbagent.jupyter.kernel.watch', fromlist=['watch']).watch(get_ipython(), "
            f"{json.dumps(action)}, {json.dumps(key)})")


def change_of(stdout: str) -> dict[str, list[str]] | None:
    """The change in an "after" line's output; None when there is none (nbagent missing in the kernel)."""
    from .probe import answer_of

    answer = answer_of(stdout)
    change = answer.get("change") if answer else None
    return change if isinstance(change, dict) else None
