"""The kernel tools served to outside agents over MCP, run in a running kernel of a Jupyter server.

Same names, descriptions and approval policies as the agent's own kernel tools
(nbagent.tools.kernel): kernel_variables and kernel_inspect read the namespace with the engine's
code, run inside the kernel by one silent line (nbagent.jupyter.kernel.probe); kernel_run sends the
code as an execute request with no history, between two silent lines that record its change to the
namespace in the kernel (nbagent.jupyter.kernel.watch), kept there per MCP session: kernel_undo and
kernel_redo (served only here) take the session's last kernel_run back or re-apply it. A timeout
interrupts the kernel, and so does a cancelled call (the outside agent's Stop). ``nbagent mcp serve
--kernel`` serves one named kernel; the ``/nbagent/mcp`` route lets each call name its kernel
(``kernel``: an id or a notebook path).

The tool set remembers which kernels each MCP session ran kernel_run in, so that when the session ends
(``end_session``: its streamable-HTTP session deleted, the stdio server exiting, the server stopping)
one more silent line releases its records there, rather than leaving them to the kernel's caller limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any, Awaitable, Callable

from ... import events as ev
from ...errors import ToolError
from ...ids import short_id
from ...render.text import kernel_line
from ...tools import kernel as engine
from ...tools.base import Tool, ToolSet, function_tool
from ...tools.context import CALLER
from ..kernel.probe import answer_of, probe_code
from ..kernel.watch import watch_code

Finder = Callable[[str], Awaitable[Any]]
"""Returns the kernel (ServerKernel or LocalKernel) a call names ("" when it names none)."""
KERNEL_ARG = ("        kernel: The kernel to use: its id, or the path of the notebook it runs for "
              "(may be left out when only one kernel runs).\n")
PROBE_TIMEOUT = 30.0
"""Seconds kernel_variables and kernel_inspect wait for their answer (a kernel that turned busy meanwhile)."""
INTERRUPT_GRACE = 10.0
"""Seconds to wait for an interrupted run's last output."""
WATCH_TIMEOUT = 10.0
"""Seconds the namespace record's lines may take (a kernel still busy after a timeout: no record)."""
MAX_TRACKED = 64
"""Sessions whose kernels are remembered for their release; a kernel itself keeps 8 callers' records."""
RELEASE_TIMEOUT = 3.0
"""Seconds an ended session's release waits for each kernel's answer (a busy kernel runs the line later)."""


BUSY_GRACE = 0.5
"""Seconds a kernel that looks busy gets to turn idle: the server learns of "idle" from its own copy of the
kernel's status messages, which can arrive after the reply to the run that just ended."""


async def _busy(kernel: Any) -> bool:
    """The kernel still runs other code after the grace (a run of ours that just ended is not "other code")."""
    deadline = asyncio.get_running_loop().time() + BUSY_GRACE
    while await kernel.busy():
        if asyncio.get_running_loop().time() >= deadline:
            return True
        await asyncio.sleep(0.05)
    return False


async def _probe(kernel: Any, action: str, name: str = "") -> str:
    busy = (f"kernel {kernel.label} is busy running other code: its variables can be read once it is idle "
            "(kernel_run would queue behind that code too)")
    if await _busy(kernel):  # the probe would queue behind the user's code: say so rather than wait
        raise ToolError(busy)
    try:
        outcome = await asyncio.wait_for(kernel.execute(probe_code(action, name), silent=True), PROBE_TIMEOUT)
    except asyncio.TimeoutError:  # it became busy just before the probe arrived
        raise ToolError(busy) from None
    answer = answer_of(outcome.get("stdout") or "")
    if answer is None:
        error = outcome.get("error") or ""
        if "ModuleNotFoundError" in error and "nbagent" in error:
            raise ToolError(f"kernel {kernel.label} has no nbagent in its Python: kernel_variables and "
                            "kernel_inspect read the namespace with nbagent's code there (install nbagent "
                            "into the kernel's environment); kernel_run works without it")
        raise ToolError(f"kernel {kernel.label} gave no answer: {error or outcome.get('stderr') or 'nothing'}")
    if "error" in answer:
        raise ToolError(str(answer["error"]))
    return str(answer.get("text", ""))


async def _run(ctx: Any, kernel: Any, code: str, timeout: float | None, owner: str) -> str:
    """kernel_run, with the change it made to the kernel's namespace as the result's last line; the kernel
    keeps the record under ``owner`` (this MCP session) for kernel_undo."""
    if await _busy(kernel):  # queued code would run whenever the kernel gets to it, after any timeout
        raise ToolError(f"kernel {kernel.label} is busy running other code: kernel_run did not queue behind it; "
                        "try again once it is idle")
    args = {"key": short_id("watch_"), "owner": owner}
    watched = await _watch(kernel, "before", args) is not None
    try:
        text = await _run_code(ctx, kernel, code, timeout)
    except ToolError as exc:
        line = await _change_line(ctx, kernel, args) if watched else ""
        if line:
            raise type(exc)(f"{exc}\n\n{line}") from None
        raise
    line = await _change_line(ctx, kernel, args) if watched else ""
    return f"{text}\n\n{line}" if line else text


async def _watch(kernel: Any, action: str, args: dict) -> dict | None:
    """Run the watcher's line (nbagent.jupyter.kernel.watch); its outcome, or None when it did not answer."""
    try:
        return await asyncio.wait_for(kernel.execute(watch_code(action, args), silent=True), WATCH_TIMEOUT)
    except (asyncio.TimeoutError, ToolError):
        return None


async def _change_line(ctx: Any, kernel: Any, args: dict) -> str:
    """The "kernel: + x, ~ df ..." line of the call (and its kernel_changed event); "" when not known."""
    outcome = await _watch(kernel, "after", args)
    answer = answer_of(outcome.get("stdout") or "") if outcome else None
    change = answer.get("change") if answer else None
    if not change:
        return ""
    names = {k: list(change.get(k) or []) for k in ("added", "rebound", "deleted", "mutated", "unchecked")}
    dropped = [str(d) for d in (answer or {}).get("dropped") or []]
    emit = getattr(ctx, "emit", None)
    if emit is not None:
        emit(ev.KernelChanged(call_id=getattr(ctx, "call_id", ""), turn_id=getattr(ctx, "turn_id", ""),
                              dropped=dropped, **names))
    line = kernel_line(names["added"], names["rebound"], names["deleted"], names["mutated"], names["unchecked"])
    if dropped:
        line += f"\n(undo memory cap reached: kernel_undo can no longer restore {', '.join(dropped)})"
    return line


async def _restore(kernel: Any, action: str, force: bool, owner: str) -> str:
    """kernel_undo / kernel_redo: this session's last kernel_run taken back (or re-applied) in the kernel."""
    if await _busy(kernel):  # the line would queue behind that code and run whenever it ends, unasked
        raise ToolError(f"kernel {kernel.label} is busy running other code: {_TOOL[action]} did not queue behind "
                        "it; try again once it is idle")
    outcome = await _watch(kernel, action, {"owner": owner, "force": force})
    answer = answer_of(outcome.get("stdout") or "") if outcome else None
    if answer is None:
        raise ToolError(f"kernel {kernel.label} gave no answer to {_TOOL[action]} (nbagent must be importable in "
                        "the kernel's Python)")
    if "conflict" in answer:
        raise ToolError(f"{answer.get('message')} (call {_TOOL[action]} with force=true to overwrite them)")
    if "error" in answer:
        raise ToolError(f"{_TOOL[action]}: {answer['error']}")
    done = "undid" if action == "undo" else "redid"
    restored = ", ".join(answer.get("restored") or []) or "none"
    lines = [f"{done} kernel_run #{answer.get('turn')} of this session; names "
             f"{'restored' if action == 'undo' else 'bound again'}: {restored}"]
    if answer.get("not_restored"):
        lines.append("not restored: " + "; ".join(answer["not_restored"]))
    return "\n".join(lines)


_TOOL = {"undo": "kernel_undo", "redo": "kernel_redo"}


async def _run_code(ctx: Any, kernel: Any, code: str, timeout: float | None) -> str:
    from .kernel import Outcome

    seconds = engine.run_timeout(timeout)
    progress = Outcome()
    task = asyncio.ensure_future(kernel.execute(code, outcome=progress))
    why = None
    try:
        outcome = await asyncio.wait_for(asyncio.shield(task), seconds)
    except TimeoutError:
        why = "timeout"
        await _interrupt_own(kernel, progress)
        try:
            outcome = await asyncio.wait_for(task, INTERRUPT_GRACE)
        except TimeoutError:
            outcome = {"error": "the kernel did not answer the interrupt"}
    except asyncio.CancelledError:  # the outside agent cancelled the call: stop the code too
        with contextlib.suppress(Exception):
            await asyncio.wait_for(_interrupt_own(kernel, progress), INTERRUPT_GRACE)
        task.cancel()
        raise
    return engine.run_report(ctx, outcome, why, seconds)


async def _interrupt_own(kernel: Any, progress: Any) -> None:
    """Interrupt the kernel only when it is running this call's code: an interrupt stops whatever runs,
    and a request still queued behind someone else's code must not stop theirs."""
    if progress.started:
        await kernel.interrupt()


class KernelToolSet(ToolSet):
    """The "kernel" tool set, which also knows the kernels each MCP session keeps records in."""

    def __init__(self, tools: list[Tool], description: str):
        super().__init__("kernel", tools, description=description)
        self.process_owner = short_id("mcp_")
        """The records' owner when a call names no MCP session (``nbagent mcp serve`` on stdio: one client)."""
        self.kernels: dict[str, dict[str, Any]] = {}
        """Per owner: the kernels (by id) its kernel_run calls kept records in."""

    def owner_of(self, client: str) -> str:
        return client or self.process_owner

    def used(self, owner: str, kernel: Any) -> None:
        kernels = self.kernels.pop(owner, {})  # re-inserted: the most recently used owner comes last
        kernels[str(getattr(kernel, "kernel_id", kernel))] = kernel
        self.kernels[owner] = kernels
        while len(self.kernels) > MAX_TRACKED:  # sessions that ended unseen (the SDK's idle timeout)
            self.kernels.pop(next(iter(self.kernels)))

    async def end_session(self, client: str = "") -> None:
        """Release the records of MCP session ``client`` ("": this process's one client) in every kernel
        it ran code in; best effort: a kernel that does not answer within RELEASE_TIMEOUT is left to the
        line (it runs when the kernel is free) or to its caller limit."""
        kernels = self.kernels.pop(self.owner_of(client), {})
        await asyncio.gather(*(_release(kernel, self.owner_of(client)) for kernel in kernels.values()))

    async def end_all(self) -> None:
        """Every session's records released (the server stops)."""
        owners = list(self.kernels)
        await asyncio.gather(*(_release(k, owner) for owner in owners for k in self.kernels.pop(owner).values()))


async def _release(kernel: Any, owner: str) -> None:
    with contextlib.suppress(Exception):  # gone, restarted, unreachable: its records went with it or stay capped
        await asyncio.wait_for(kernel.execute(watch_code("release", {"owner": owner}), silent=True), RELEASE_TIMEOUT)


def kernel_toolset(find: Finder, *, choose: bool) -> KernelToolSet:
    """The "kernel" tool set over ``find``; ``choose`` adds the ``kernel`` argument to every tool."""
    def owner_of(ctx: Any) -> str:
        return toolset.owner_of(CALLER.get())

    async def kernel_variables(ctx, kernel: str = "") -> str:
        return await _probe(await find(kernel), "variables")

    async def kernel_inspect(ctx, name: str, kernel: str = "") -> str:
        return await _probe(await find(kernel), "inspect", name)

    async def kernel_run(ctx, code: str, timeout: float | None = None, kernel: str = "") -> str:
        found = await find(kernel)
        toolset.used(owner_of(ctx), found)
        return await _run(ctx, found, code, timeout, owner_of(ctx))

    async def kernel_undo(ctx, force: bool = False, kernel: str = "") -> str:
        """Take back the last kernel_run of this session that changed the kernel's variables: names it
        rebound get their old objects again, names it added are removed, names it deleted come back.
        Objects changed in place cannot be restored; the result says which. Refused, restoring nothing,
        when the user rebound one of those names since, unless force is true. Repeat to go further back.

        Args:
            force: Overwrite names the user rebound after that kernel_run.
        """
        return await _restore(await find(kernel), "undo", force, owner_of(ctx))

    async def kernel_redo(ctx, force: bool = False, kernel: str = "") -> str:
        """Re-apply the kernel_run the last kernel_undo took back (its names bound again). Refused when
        the user rebound one of those names since the undo, unless force is true.

        Args:
            force: Overwrite names the user rebound after the undo.
        """
        return await _restore(await find(kernel), "redo", force, owner_of(ctx))

    run_tool = next(t for t in engine.KERNEL.tools if t.name == "kernel_run")
    served: list[Tool] = []
    for fn in (kernel_variables, kernel_inspect, kernel_run, kernel_undo, kernel_redo):
        original = next((t for t in engine.KERNEL.tools if t.name == fn.__name__), None)
        if original is not None:  # the agent's own tool: its words
            fn.__doc__ = getattr(engine, fn.__name__).__doc__
        fn.__doc__ = _doc_with_kernel_arg(fn.__doc__ or "")
        policy = original or run_tool  # undo and redo change the kernel as kernel_run does: the same approval
        tool = function_tool(fn, toolset="kernel", read_only=policy.read_only, approval=policy.approval,
                             runs=policy.runs)
        served.append(tool if choose else _without_kernel_arg(tool))
    toolset = KernelToolSet(served, description=engine.KERNEL.description)  # the tools above use it when called
    return toolset


def _doc_with_kernel_arg(doc: str) -> str:
    if "Args:" not in doc:
        doc = doc.rstrip() + "\n\n    Args:\n"
    return doc.rstrip() + "\n" + KERNEL_ARG


def _without_kernel_arg(tool: Tool) -> Tool:
    """The same tool with no ``kernel`` argument on offer (the served kernel was fixed at start)."""
    params = dict(tool.parameters)
    params["properties"] = {k: v for k, v in params.get("properties", {}).items() if k != "kernel"}
    return replace(tool, parameters=params)


def named_kernel(url: str, token: str, query: str) -> Finder:
    """The one kernel ``query`` names on the Jupyter server at ``url``, looked up again at each call
    (a notebook's kernel may have been restarted or changed meanwhile)."""
    from .kernel import ServerKernel

    async def find(name: str) -> Any:
        if name and name != query:
            raise ToolError(f"this server serves kernel {query} only")
        return await ServerKernel.find(url, token, query)

    return find


def token_kernels(url: str, token: str) -> Finder:
    """Kernels of the Jupyter server at ``url``, reached with its token: the one named, or the only one
    running (``nbagent acp`` started by that server: the Jupyter AI persona)."""
    from .kernel import ServerKernel

    async def find(name: str) -> Any:
        if name:
            return await ServerKernel.find(url, token, name)
        server = ServerKernel(url, token, "")
        running = await server._get("api/kernels") or []
        if len(running) != 1:
            sessions = await server._get("api/sessions") or []
            paths = ", ".join(str(s.get("path")) for s in sessions) or "none"
            raise ToolError(f"{len(running)} kernels run here: name one with kernel (an id, or a notebook "
                            f"path: {paths})")
        return ServerKernel(url, token, running[0]["id"])

    return find


def server_kernels(serverapp: Any) -> Finder:
    """Kernels of the server this runs in: the one named, or the only one running."""
    from .kernel import LocalKernel

    async def find(name: str) -> Any:
        if name:
            return await LocalKernel.find(serverapp, name)
        running = serverapp.kernel_manager.list_kernels()
        if len(running) != 1:
            sessions = await serverapp.session_manager.list_sessions()
            paths = ", ".join(str(s.get("path")) for s in sessions) or "none"
            raise ToolError(f"{len(running)} kernels run here: name one with kernel (an id, or a notebook "
                            f"path: {paths})")
        return LocalKernel(serverapp.kernel_manager, running[0]["id"])

    return find
