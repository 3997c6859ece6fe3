"""notebook_check: does the notebook still run from top to bottom in a fresh kernel?

It runs the notebook's code, so it is never read-only: a copy of the notebook (as its store holds it: the
open document if any, else the file) runs in a fresh kernel of its own kernelspec with nbclient, the
workspace as working directory, a timeout on each cell. Where the sandbox works the kernel runs in it
(nbagent.workspace.sandbox: it writes only in the workspace, read-only in read-only mode, reads no
secret stores, has no network and a scrubbed environment; it talks to nbclient over Unix sockets in a
private folder, since it has no network). The user's kernel and the file are never touched by the
check itself, and the fresh kernel is shut down after.
The report: cells that fail (a timed-out cell is interrupted and reported), outputs that differ from the
stored ones (nbcompare), names a cell uses that no earlier cell defines and execution counts out of
order (nbstatic). ``%agent check``, ``nbagent check`` and the panel's Check button run the same.
nbclient and jupyter_client are imported only when a check runs.

Cells that are prompts to the agent (``%agent``, ``%%agent``) are left out, as the replay plan leaves
them out: re-running one would be a model turn nobody asked for (with a real model, one that costs
money), and its answer is never the same twice. The report says which were left out.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import CommandKilled, ToolError
from .nbcompare import Difference, differences
from .nbstatic import StaticReport, analyse

CELL_TIMEOUT, CELL_TIMEOUT_MAX = 120.0, 3600.0
TIMEOUT_NAME = "CellTimeout"


@dataclass
class Failure:
    cell_index: int
    cell_id: str
    error: str
    timed_out: bool = False


@dataclass
class CheckReport:
    name: str
    kernel: str
    cells_run: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    static: StaticReport = field(default_factory=StaticReport)
    executed: Any = field(default=None, repr=False)
    """The copy as the fresh kernel left it (nbformat), outputs and all: what a check reads answers from."""
    left_out: list[str] = field(default_factory=list)
    """The ids of the agent cells (``%agent``, ``%%agent``) the check did not run."""

    @property
    def clean(self) -> bool:
        return not (self.failures or self.differences or self.static.hidden or self.static.order)

    def text(self) -> str:
        lines = [f"notebook_check {self.name}: ran {self.cells_run} code cell(s) in a fresh {self.kernel} kernel "
                 f"in {self.seconds:.1f} s"]
        lines += _section("failing cells", [f"cell {f.cell_id} (#{f.cell_index}): {f.error}" for f in self.failures])
        if self.left_out:
            lines.append(f"left out: {len(self.left_out)} agent cell(s) ({', '.join(self.left_out)}): a check never "
                         "re-runs a prompt to the agent (%agent, %%agent), so it spends no model turn")
        lines += _section("outputs that differ from the stored ones (- stored, + now)",
                          [f"cell {d.cell_id} (#{d.cell_index}):\n" + _indented(d.diff) for d in self.differences])
        lines += _section("names used before any cell defines them (hidden state from the live kernel)",
                          [_hidden_line(h) for h in self.static.hidden])
        lines += _section("execution order of the stored notebook", self.static.order)
        if self.static.star_import_in:
            lines.append(f"note: cell {self.static.star_import_in} has a star import; names it brings are not "
                         "known to the check")
        if self.static.unparsed:
            lines.append("not analysed (not Python or does not parse): " + ", ".join(self.static.unparsed))
        lines.append("verdict: " + ("runs from top to bottom in a fresh kernel, outputs as stored" if self.clean
                                    else "does NOT reproduce from a fresh kernel as saved (see above)"))
        return "\n".join(lines)


def _indented(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


def _section(title: str, items: list[str]) -> list[str]:
    return [f"{title} ({len(items)}):", *(f"  {item}" for item in items)] if items else []


def _hidden_line(h: Any) -> str:
    where = (f"cell {h.defined_later_in} defines it further down" if h.defined_later_in
             else "no cell defines it: it exists only in the live kernel")
    return f"cell {h.cell_id} (#{h.cell_index}) uses {h.name}: {where}"


def check_timeout(timeout: float | None) -> float:
    return min(max(float(timeout or CELL_TIMEOUT), 1.0), CELL_TIMEOUT_MAX)


OnCell = Callable[[int, int, str], None]
"""``on_cell(position, total, cell_id)``: a cell of the check starts (1-based, of the cells it runs)."""


def check_notebook(notebook: dict, name: str, cwd: Path, timeout: float | None = None,
                   on_stop: Callable[[Callable[[], int]], Callable[[], None]] | None = None,
                   confine: Any = None, on_cell: OnCell | None = None) -> CheckReport:
    """Run a copy of ``notebook`` (nbformat 4 JSON) in a fresh kernel and report; see the module docstring.

    ``on_stop(hook) -> remove`` registers what Stop does (interrupt and end the check); ``confine``
    (a sandbox and its policy, nbagent.tools.confinement) runs the kernel in the sandbox; ``on_cell`` is
    told when each cell starts (a terminal's progress line)."""
    with tempfile.TemporaryDirectory(prefix="nbagent-check-") as private:
        return _check(notebook, name, cwd, timeout, on_stop, confine, Path(private), on_cell)


def _check(notebook: dict, name: str, cwd: Path, timeout: float | None, on_stop: Any, confine: Any,
           private: Path, on_cell: OnCell | None = None) -> CheckReport:
    import nbformat
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient import NotebookClient

    stored = notebook.get("cells", [])
    nb = nbformat.reads(json.dumps(notebook), as_version=4)  # a copy, with multiline strings joined
    kernel = ((nb.get("metadata") or {}).get("kernelspec") or {}).get("name") or "python3"
    agent_cells = _leave_out_agent_cells(nb.cells)
    report = CheckReport(name=name, kernel=kernel, static=analyse(stored),
                         left_out=[_cell_id(stored[i], i) for i in agent_cells])
    seconds = check_timeout(timeout)
    replies: dict[int, dict] = {}
    stopped: list[bool] = []
    to_run = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()]

    def executed(cell, cell_index, execute_reply, **_):
        replies[cell_index] = (execute_reply or {}).get("content") or {}

    def starting(cell, cell_index, **_):
        if stopped:
            raise CommandKilled("killed by the user (the check was stopped)")
        if on_cell is not None and cell_index in to_run:
            on_cell(to_run.index(cell_index) + 1, len(to_run), _cell_id(cell, cell_index))

    client = NotebookClient(nb, timeout=int(seconds), kernel_name=kernel, allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": str(cwd)}},
                            error_on_timeout={"ename": TIMEOUT_NAME,
                                              "evalue": f"interrupted after {seconds:g} s (the check's per-cell timeout)",
                                              "traceback": []},
                            on_cell_executed=executed, on_cell_start=starting,
                            # The kernel is the check's own and thrown away: killed at the end rather than
                            # asked to shut down and waited for (0.4-0.6 s a check, measured by
                            # bench/eval_overhead.py's DABStep tasks on this machine).
                            shutdown_kernel="immediate")
    if confine is not None:
        client.kernel_manager_class = _confined_manager(confine, cwd, private)

    loop = asyncio.new_event_loop()

    def stop() -> int:
        stopped.append(True)
        if client.km is None or not loop.is_running():
            return 0
        asyncio.run_coroutine_threadsafe(_interrupt(client), loop)
        return 1

    remove = on_stop(stop) if on_stop is not None else (lambda: None)
    started = time.perf_counter()
    try:
        _run_on_own_thread(loop, client)
    except NoSuchKernel:
        raise ToolError(f"{name} asks for the kernel {kernel!r}, which is not installed here "
                        "(jupyter kernelspec list shows the installed ones)") from None
    finally:
        remove()
    if stopped:
        raise CommandKilled("killed by the user (the check was stopped; its kernel is shut down)")
    report.seconds = time.perf_counter() - started
    report.cells_run = len(replies)
    report.executed = nb
    report.failures = [_failure(i, stored[i], reply) for i, reply in sorted(replies.items())
                       if reply.get("status") == "error"]
    failed = {f.cell_index for f in report.failures}  # a failure is reported once, as a failure
    report.differences = [d for d in differences(stored, nb.cells)
                          if d.cell_index not in failed and d.cell_index not in agent_cells]
    return report


def _confined_manager(confine: Any, cwd: Path, private: Path) -> type:
    """A kernel manager whose kernel starts in the sandbox: its command wrapped, its environment
    scrubbed, and its sockets Unix sockets in ``private`` (writable inside; the kernel has no network)."""
    from jupyter_client.manager import AsyncKernelManager

    box, policy = confine
    policy = dataclasses.replace(policy, writable=(*policy.writable, private))

    class ConfinedKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            self.connection_file = str(private / "kernel.json")
            self.transport = "ipc"
            self.ip = str(private / "kernel-ipc")

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            # In its own pid namespace the kernel's parent is pid 1, which ipykernel takes for "my parent
            # died" when told its parent's pid: it is not told (the sandbox dies with us anyway).
            argv = ["env", "-u", "JPY_PARENT_PID", *super().format_kernel_cmd(extra_arguments)]
            if any("ipykernel" in a for a in argv):  # and so it would print its console banner
                argv.append("--IPKernelApp.log_level=CRITICAL")
            return box.command(argv, policy, cwd)

        async def start_kernel(self, **kw: Any) -> None:  # type: ignore[override]
            # A signal would reach bwrap, not the kernel in its own session: interrupt by message.
            if self.kernel_spec is not None:
                self.kernel_spec.interrupt_mode = "message"
            kw["env"] = box.environment(policy, {"IPYTHONDIR": str(private / "ipython")},
                                        base=kw.get("env") or os.environ)
            await super().start_kernel(**kw)

    return ConfinedKernelManager


def is_agent_cell(code: str) -> bool:
    """A prompt to the agent (``%agent``, ``%%agent``); the same rule as the replay plan's
    (nbagent.checkpoints.replay.is_agent_cell)."""
    return code.lstrip().startswith(("%agent", "%%agent"))


def _leave_out_agent_cells(cells: list) -> set[int]:
    """Blank the agent cells of the check's copy (nbclient skips an empty cell, outputs as stored)."""
    found = {i for i, c in enumerate(cells) if c.cell_type == "code" and is_agent_cell(c.source)}
    for i in found:
        cells[i].source = ""
    return found


def _cell_id(cell: Any, index: int) -> str:
    return str(cell.get("id") or f"#{index}")


def _run_on_own_thread(loop: asyncio.AbstractEventLoop, client: Any) -> None:
    """Run the check on a thread and loop of its own, whatever thread calls: nbclient's own sync
    wrapper reuses a loop kept in a context variable, which a worker thread may inherit from another
    thread (asyncio.to_thread copies the context) and then fails on signal handlers; and a caller's
    running loop (a kernel's) cannot run it."""
    failed: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            # The kernel's own stderr (its "running over TCP without encryption" warning at start) is not
            # the user's business: what its cells print comes over the protocol, into the report.
            loop.run_until_complete(client.async_execute(stderr=subprocess.DEVNULL))
        except BaseException as exc:  # re-raised on the caller's thread
            failed.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="nbagent-notebook-check", daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


async def _interrupt(client: Any) -> None:
    from jupyter_core.utils import ensure_async

    await ensure_async(client.km.interrupt_kernel())


def _failure(index: int, cell: dict, reply: dict) -> Failure:
    timed_out = reply.get("ename") == TIMEOUT_NAME
    return Failure(index, str(cell.get("id") or f"#{index}"), f"{reply.get('ename')}: {reply.get('evalue')}",
                   timed_out)


# ----- the tool -----------------------------------------------------------------------------------

def notebook_check(ctx, path: str, timeout: float | None = None) -> str:
    """Run a copy of a notebook top to bottom in a fresh kernel (the user's kernel and file stay untouched).

    Reports failing cells, changed outputs, names used before any cell defines them (hidden state)
    and out-of-order execution counts.

    Args:
        path: The .ipynb file.
        timeout: Seconds per cell (default 120, at most 3600).
    """
    from .confinement import confinement

    processes = getattr(ctx, "processes", None)
    on_stop = processes.add_stop_hook if processes is not None else None
    return check_path(ctx.workspace, path, timeout, ctx=ctx, on_stop=on_stop, confine=confinement(ctx)).text()


def check_path(workspace: Any, path: str | Path, timeout: float | None = None, *, ctx: Any = None,
               on_stop: Callable[[Callable[[], int]], Callable[[], None]] | None = None,
               confine: Any = "default", on_cell: OnCell | None = None) -> CheckReport:
    """Check the notebook at ``path`` inside ``workspace`` (a nbagent.workspace.Workspace), as its
    store holds it: the tool, ``%agent check`` and ``nbagent check`` all come here. ``confine``: the
    sandbox and policy (by default this process's sandbox with the workspace writable; None: unconfined)."""
    from . import nbstores
    from .confinement import confinement_at

    if confine == "default":
        confine = confinement_at(workspace.root)

    target = workspace.resolve(str(path))
    if target.suffix != ".ipynb":
        raise ToolError(f"{path} is not a notebook (.ipynb)")
    name = workspace.rel(target)
    if not target.is_file():
        raise ToolError(f"{name}: no such notebook in the workspace")
    snap = nbstores.read(ctx, target, name)
    return check_notebook(snap.notebook, name, workspace.root, timeout, on_stop=on_stop, confine=confine,
                          on_cell=on_cell)
