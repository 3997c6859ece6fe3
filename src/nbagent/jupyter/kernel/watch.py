"""Run inside a kernel for callers that reach it through the Jupyter protocol: record, undo and redo its changes.

The MCP-served kernel_run (nbagent.jupyter.remote.kernel_tools) and a server-side notebook_run
(nbagent.jupyter.server.cell_runner) reach the kernel only by messages, so they send one fixed, silent
line before the call and one after; the namespace is compared here by the engine's own code
(nbagent.checkpoints.kernel_ledger) and the change comes back as one marked JSON line, as the probe's
answers do. The record stays here, in a KernelLedger of the caller's own (its ``owner``: a server
agent's session, an MCP session; owners never see each other's records), with its normal memory cap,
so that later lines can undo and redo it: ``undo``, ``redo``, ``conflicts``, ``targets``,
``forget_undone`` and ``release``. A line without an owner is shown, then forgotten.

Restart-and-replay for such a caller (an undo that could not restore everything) is planned here too,
by the code the in-kernel agent uses (nbagent.checkpoints.replay over ShellBridge: the kernel's history,
CellClock's times, the notebook's cells): ``replay_plan`` answers the cells before the agent's call;
``reset`` clears the user's variables before the caller runs those cells again.

Every line carries its arguments as one JSON text inside a string literal: data, never code.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from typing import Any

from ...checkpoints.kernel_ledger import KernelConflict, KernelLedger, Snapshot, record_dict
from .loader import import_line
from .probe import MARK, answer_of

MAX_PENDING = 16
"""Snapshots kept for calls whose "after" never came (a call cancelled mid-way): the oldest go first."""
MAX_OWNERS = 8
"""Callers whose records one kernel keeps; past it the least recently used caller's records are released
(a server session or MCP client that went away without saying so holds no memory for ever)."""
ACTIONS = ("before", "after", "undo", "redo", "conflicts", "targets", "forget_undone", "release", "replay_plan",
           "reset")

_LEDGERS: "weakref.WeakKeyDictionary[Any, OrderedDict[str, KernelLedger]]" = weakref.WeakKeyDictionary()
_BEFORE: dict[tuple[str, str], Snapshot] = {}
_LOCK = threading.Lock()


def watch(shell: Any, action: str, args: str = "{}") -> None:
    """Carry out ``action`` with ``args`` (a JSON object's text) and print the one marked answer line."""
    try:
        given = json.loads(args)
        if action not in ACTIONS or not isinstance(given, dict):
            raise ValueError(f"unknown watch action {action!r} or arguments that are not an object")
        answer = _act(shell, action, given)
    except KernelConflict as exc:
        answer = {"conflict": exc.names, "message": str(exc)}
    except (ValueError, TypeError, KeyError) as exc:
        answer = {"error": str(exc)}
    print(MARK + json.dumps(answer, default=str), flush=True)


def _act(shell: Any, action: str, args: dict) -> dict:
    owner = str(args.get("owner") or "")
    if action == "before":
        return _before(shell, owner, str(args["key"]), args)
    if action == "after":
        return _after(shell, owner, str(args["key"]), args)
    if action in ("replay_plan", "reset"):  # the kernel's history and namespace: no record needed
        return _replay_action(shell, action, args)
    ledger = _ledger(shell, owner, args, create=False)
    if ledger is None:
        return {"error": "this kernel holds no record of these calls: it was restarted since, or the records "
                         "were released", "records": []}
    turn = args.get("turn")
    if action in ("undo", "redo"):
        return _move(ledger, action, turn, bool(args.get("force")))
    if action == "conflicts":
        return {"conflicts": ledger.conflicts(str(args["of"]), int(args["turn"]))}
    if action == "forget_undone":
        ledger.forget_undone()
    elif action == "release":
        _release(shell, owner, ledger, turn)
    return {"undo": ledger.undo_target(), "redo": ledger.redo_target(), "records": records_of(ledger)}


def _before(shell: Any, owner: str, key: str, args: dict) -> dict:
    ledger = _ledger(shell, owner, args, create=True)
    assert ledger is not None
    with _LOCK:
        _BEFORE[(owner, key)] = ledger.before()
        while len(_BEFORE) > MAX_PENDING:
            _BEFORE.pop(next(iter(_BEFORE)))
    return {"ok": True}


def _after(shell: Any, owner: str, key: str, args: dict) -> dict:
    with _LOCK:
        snap = _BEFORE.pop((owner, key), None)
    ledger = _ledger(shell, owner, args, create=True)
    if snap is None or ledger is None:
        return {"error": "no snapshot before this call"}
    turn = args.get("turn")
    if turn is None:  # the caller numbers nothing (an MCP session): each call is a turn of its own
        turn = max((r.turn for r in ledger.records), default=0) + 1
    record, dropped = ledger.after(snap, int(turn), str(args.get("turn_id") or ""), key)
    if not owner:
        ledger.release()  # shown, not kept: no caller asked to undo it
    change = {} if record is None else {k: getattr(record, k) for k in
                                        ("added", "rebound", "deleted", "mutated", "unchecked")}
    answer: dict[str, Any] = {"change": change, "dropped": dropped, "turn": int(turn)}
    if owner:
        answer["records"] = records_of(ledger)
    return answer


def _move(ledger: KernelLedger, action: str, turn: Any, force: bool) -> dict:
    target = turn if turn is not None else (ledger.undo_target() if action == "undo" else ledger.redo_target())
    if target is None:
        return {"error": f"nothing to {action}: no kernel change of these calls is left to {action}",
                "records": records_of(ledger)}
    if not ledger.of_turn(int(target)):
        return {"error": f"this kernel holds no record of turn {target}: it was restarted since, or the record "
                         "was released", "records": records_of(ledger)}
    try:
        done = ledger.undo(int(target), force) if action == "undo" else ledger.redo(int(target), force)
    except KernelConflict as exc:
        return {"conflict": exc.names, "message": str(exc), "turn": int(target), "records": records_of(ledger)}
    return {"turn": int(target), "restored": done.restored, "not_restored": done.not_restored,
            "execution_count": done.execution_count, "records": records_of(ledger)}


def _ledger(shell: Any, owner: str, args: dict, *, create: bool) -> KernelLedger | None:
    """The caller's ledger in this kernel (the most recently used last); ``max_bytes`` updates its cap."""
    from .bridge import bridge_from_shell

    with _LOCK:
        owners = _LEDGERS.setdefault(shell, OrderedDict())
        ledger = owners.get(owner)
        if ledger is None and create:
            cap = 0 if not owner else args.get("max_bytes")
            budget = args.get("budget_seconds")
            extra = {"budget_seconds": float(budget)} if budget else {}
            bridge = bridge_from_shell(shell, allow_run=False)
            ledger = owners[owner] = KernelLedger(bridge, max_bytes=None if cap is None else int(cap),
                                                  execution_count=getattr(bridge, "execution_count", None), **extra)
            while len(owners) > MAX_OWNERS:
                owners.popitem(last=False)[1].release()
        elif ledger is not None:
            owners.move_to_end(owner)
            if owner and args.get("max_bytes") is not None:
                ledger.max_bytes = int(args["max_bytes"])
        return ledger


def _release(shell: Any, owner: str, ledger: KernelLedger, turn: Any) -> None:
    """Forget one turn's records, or all of the caller's (its session is gone)."""
    if turn is not None:
        ledger.release(int(turn))
        return
    ledger.release()
    with _LOCK:
        _LEDGERS.get(shell, OrderedDict()).pop(owner, None)


def _replay_action(shell: Any, action: str, args: dict) -> dict:
    """The restart-and-replay plan of the cells before execution count ``upto``, or the namespace cleared."""
    from dataclasses import asdict

    from ...checkpoints.replay import plan_source, replay_plan
    from .bridge import ShellBridge

    bridge = ShellBridge(shell, None)  # reads the history and the notebook, runs nothing
    if action == "reset":
        bridge.reset()
        return {"ok": True}
    upto = args.get("upto")
    if upto is not None and (not isinstance(upto, int) or isinstance(upto, bool)):
        raise ValueError("replay_plan takes an integer \"upto\" (the agent call's execution count)")
    cells = replay_plan(bridge, upto)
    return {"cells": [asdict(c) for c in cells], "source": plan_source(cells) if cells else ""}


def records_of(ledger: KernelLedger) -> list[dict]:
    return [record_dict(r) for r in ledger.records]


def watch_code(action: str, args: dict[str, Any], *, loaded_only: bool = False) -> str:
    """The one line sent to the kernel: ``args`` as JSON text in a string literal, so it is data, not code.

    ``loaded_only``: a line that does nothing (and answers nothing) in a kernel that never loaded this
    module, so it holds no record: asking every kernel of a server imports nbagent into none of them."""
    text = json.dumps(json.dumps(args))  # ASCII JSON inside a JSON string: also a valid Python literal
    call = f".watch(get_ipython(), {json.dumps(action)}, {text})"
    if loaded_only:
        return f"(lambda m: m and m{call})(__import__('sys').modules.get({json.dumps(__name__)}))"
    return import_line(__name__, call[1:])  # never a package of the notebook's folder (nbagent.jupyter.kernel.loader)

