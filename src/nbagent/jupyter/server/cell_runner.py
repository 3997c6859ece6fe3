"""notebook_run on the server: cells run in the notebook's own kernel, outputs go where the notebook is.

A second kernel client (jupyter_client's ``execute_interactive``) sends each cell's source to the
notebook's kernel and collects the IOPub messages of that request as nbformat outputs
(``nbformat.v4.output_from_msg``). The outputs and the execution count are written like JupyterLab
writes them: into the live document when one is open, else through the notebook's store (the tab
or the file). Running stops at the first cell that fails, as "run all" does. Two silent lines around
the cells (nbagent.jupyter.kernel.watch) say what the run did to the kernel's variables and keep that
record in the kernel for the agent's undo, which reaches it with more such lines (``kernel_action``).
When that undo could not restore everything, ``replay_cells`` runs the restart-and-replay plan the kernel
made (the user's confirmed click in the panel).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import nbformat

from ...errors import ToolError
from ...ids import short_id
from ...tools.nbshrink import as_text
from ...tools.nbdoc import find
from ..kernel.probe import answer_of
from ..kernel.watch import watch_code
from ..remote.kernel import own_session

CELL_TIMEOUT = 300.0
WATCH_TIMEOUT = 10.0
"""Seconds the namespace watcher's lines may take; past it the run is reported without its change."""
IDLE_GRACE = 1.0
"""Seconds a busy kernel is given to go idle before an undo line or a replay is refused."""


async def run_cells(notebooks: Any, rel: str, name: str, cell_ids: list[str], kernel_id: str,
                    watch: dict | None = None) -> dict:
    """Run the cells; ``watch`` (owner, turn, ...: nbagent.checkpoints.remote_ledger) keeps the kernel's
    record of the run there for undo, and the result then holds it as "kernel_record"."""
    snap = await notebooks.aread(rel, notebooks.root / rel, name)
    cells = snap.notebook["cells"]
    chosen = [cells[find(cells, cell_id, name)] for cell_id in cell_ids]
    not_code = [c["id"] for c in chosen if c["cell_type"] != "code"]
    if not_code:
        raise ToolError(f"only code cells run; not code: {', '.join(not_code)}")
    kernel = notebooks.serverapp.kernel_manager.get_kernel(kernel_id)
    client = kernel.client(session=own_session(kernel.session))  # not the shared one: see own_session
    client.start_channels()
    done: list[dict] = []
    args = {**(watch or {}), "key": short_id("watch_")}
    answer = None
    try:
        await client.wait_for_ready(timeout=30)
        watched = await _watch(client, "before", args) is not None
        try:
            for cell in chosen:
                result = await _run_one(client, cell)
                await _write(notebooks, rel, name, result)
                done.append(result)
                if result["status"] != "ok":
                    break
        finally:
            if watched:
                answer = answer_of(await _watch(client, "after", args) or "")
    finally:
        client.stop_channels()
    skipped = len(chosen) - len(done)
    note = f"stopped at the failing cell: {skipped} cell(s) not run" if skipped else ""
    result: dict[str, Any] = {"cells": done, "note": note, "kernel_id": kernel_id}
    change = answer.get("change") if answer else None
    if change:
        result["kernel_changed"] = change
    if answer and watch and "records" in answer:
        result["kernel_record"] = {k: answer[k] for k in ("records", "dropped", "turn") if k in answer}
    return result


async def idle_soon(kernel: Any, grace: float = IDLE_GRACE) -> bool:
    """Whether the kernel is idle, or goes idle within ``grace`` seconds. The server learns of a run's end
    from the kernel's status message, a moment after the reply: an Undo clicked as the user's cell ends
    must not be refused for that moment."""
    deadline = time.monotonic() + grace
    while getattr(kernel, "execution_state", "") == "busy":
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def kernel_action(notebooks: Any, kernel_id: str, action: str, args: dict) -> dict:
    """One watcher line (undo, redo, conflicts, ...) in kernel ``kernel_id``, on its own client; its answer.
    ``args["if_loaded"]``: only in a kernel where the watcher already ran (a search of every kernel)."""
    args = dict(args)
    loaded_only = bool(args.pop("if_loaded", False))
    manager = notebooks.serverapp.kernel_manager
    if kernel_id not in manager:
        return {"error": "its kernel is no longer running: the record went with it", "records": []}
    kernel = manager.get_kernel(kernel_id)
    if not await idle_soon(kernel):  # the line would queue and run later, unasked
        return {"error": "the kernel is busy running code; try again once it is idle", "retry": True}
    client = kernel.client(session=own_session(kernel.session))
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=30)
        out = await _watch(client, action, args, loaded_only=loaded_only)
    finally:
        client.stop_channels()
    answer = answer_of(out or "")
    return answer if answer is not None else {"error": "the kernel did not answer (is nbagent importable there?)"}


async def replay_cells(notebooks: Any, kernel_id: str, cells: list[dict], owner: str) -> dict:
    """Restart and replay in kernel ``kernel_id``: clear the user's variables, then run ``cells``
    (``execution_count``, ``code``, ``cell_id``) in order, stopping at the first error.

    Each cell is its own execute request on a kernel client, as notebook_run's cells are, rather than one
    watcher line that runs them all: a cell then runs at the kernel's top level like the user's own (its
    magics, its displays, an interrupt from JupyterLab stops it), and no line holds the kernel for the whole
    replay past the watcher's timeout. ``store_history=False``: the replayed cells add no In[] entries
    and leave the notebook's outputs alone. Refused (``retry``) while the kernel is busy."""
    manager = notebooks.serverapp.kernel_manager
    if kernel_id not in manager:
        return {"error": "the kernel is no longer running: there is nothing to replay into"}
    kernel = manager.get_kernel(kernel_id)
    if not await idle_soon(kernel):
        return {"error": "the kernel is busy running code; replay once it is idle", "retry": True}
    client = kernel.client(session=own_session(kernel.session))
    client.start_channels()
    ran: list[int] = []
    try:
        await client.wait_for_ready(timeout=30)
        if answer_of(await _watch(client, "reset", {"owner": owner}) or "") != {"ok": True}:
            return {"error": "the kernel did not clear its variables (is nbagent importable there?): nothing ran"}
        for cell in cells:
            error = await _replay_one(client, str(cell.get("code", "")))
            if error is not None:
                return {"ran": ran, "failed": cell.get("execution_count"), "failed_cell_id": cell.get("cell_id"),
                        "error": error}
            ran.append(int(cell.get("execution_count") or 0))
    finally:
        client.stop_channels()
    return {"ran": ran}


async def _replay_one(client: Any, code: str) -> str | None:
    """Run one replayed cell; its error ("NameError: x") or None."""
    try:
        reply = await client.execute_interactive(code, store_history=False, allow_stdin=False, stop_on_error=True,
                                                 output_hook=lambda msg: None, timeout=CELL_TIMEOUT)
    except TimeoutError:
        return f"ran longer than {CELL_TIMEOUT:.0f} s (it is still running in the kernel: interrupt it from JupyterLab)"
    content = reply["content"]
    if content.get("status", "ok") == "ok":
        return None
    return f"{content.get('ename', 'error')}: {content.get('evalue', '')}".rstrip(": ")


async def _watch(client: Any, action: str, args: dict, *, loaded_only: bool = False) -> str | None:
    """The namespace watcher's line (nbagent.jupyter.kernel.watch), silent; its stdout, or None."""
    out: list[str] = []

    def hook(msg: dict) -> None:
        if msg["header"]["msg_type"] == "stream":
            out.append(msg["content"].get("text", ""))

    try:
        await client.execute_interactive(watch_code(action, args, loaded_only=loaded_only), silent=True,
                                         store_history=False, allow_stdin=False, output_hook=hook,
                                         timeout=WATCH_TIMEOUT)
    except TimeoutError:
        return None
    return "".join(out)


async def _run_one(client: Any, cell: dict) -> dict:
    outputs: list[dict] = []

    def hook(msg: dict) -> None:
        kind = msg["header"]["msg_type"]
        if kind == "clear_output":
            outputs.clear()
        elif kind in ("stream", "display_data", "execute_result", "error"):
            output = dict(nbformat.v4.output_from_msg(msg))
            if kind == "stream" and outputs and outputs[-1].get("name") == output["name"] \
                    and outputs[-1]["output_type"] == "stream":
                outputs[-1]["text"] += output["text"]  # JupyterLab joins consecutive stream chunks too
            else:
                outputs.append(output)

    try:
        reply = await client.execute_interactive(as_text(cell["source"]), output_hook=hook, allow_stdin=False,
                                                 stop_on_error=True, timeout=CELL_TIMEOUT)
    except TimeoutError:
        raise ToolError(f"cell {cell['id']} ran longer than {CELL_TIMEOUT:.0f} s; it is still running in "
                        "the kernel (interrupt it from JupyterLab)") from None
    content = reply["content"]
    return {"id": cell["id"], "cell_type": "code", "source": cell["source"], "outputs": outputs,
            "execution_count": content.get("execution_count"), "status": content.get("status", "ok")}


async def _write(notebooks: Any, rel: str, name: str, result: dict) -> None:
    op = {"op": "outputs", "cell_id": result["id"], "outputs": result["outputs"],
          "execution_count": result["execution_count"]}
    await notebooks.aapply(rel, notebooks.root / rel, name, [op])
