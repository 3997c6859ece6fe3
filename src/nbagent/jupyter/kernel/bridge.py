"""A KernelBridge for a live IPython shell: its namespace, and a runner for kernel_run.

The agent runs its tools on its own worker thread while the kernel's main thread waits for the next
cell, runs one, or waits for the agent (``%agent --wait``). Marshalling the code onto the main
thread would deadlock in that last case, so kernel_run's code runs on the calling thread, through
``shell.run_cell(code, store_history=False)``, made safe this way:

- One lock per shell: one agent's code at a time.
- Printed output is routed by thread. For the run, sys.stdout and sys.stderr are wrapped by a proxy
  that sends the running thread's writes to a buffer and every other thread's to the real stream,
  so a cell the user runs meanwhile still prints in the notebook, and the agent's prints do not.
- Tracebacks are routed the same way (the shell's ``_showtraceback`` hook, which both IPython and
  ipykernel use to show errors), so a failure reaches the model rather than the user's notebook.
- The last expression's value is captured by an AST transformer that assigns it to a hidden name,
  not through the display hook, which is shared with the main thread and would publish an Out[]
  into the notebook. The cell's text is left as written, so tracebacks show the model's own code.
- No history: no execution count, no In/Out entries; the shell's last_execution_result and the
  display hook's state are put back afterwards, so a cell waiting on the agent is unaffected.

Not isolated, on purpose or by necessity: the namespace (that is the point); display() calls and
figures, which go to the notebook's current cell as usual (and a copy of this thread's goes to the
model: the outcome's ``displays``, nbagent.images shows their images to a model that can see); top-level ``await`` (the worker thread has
no kernel event loop). The kernel's interrupt button stops the main thread only, so the runner has its
own: ``interrupt()`` raises KeyboardInterrupt in the thread running the code (CPython's asynchronous
exception, delivered between bytecodes, as SIGINT is to the main thread); Stop, Abort and kernel_run's
timeout use it. Code blocked inside one long C call is interrupted when that call returns.
"""

from __future__ import annotations

import ast
import ctypes
import io
import sys
import threading
import weakref
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from IPython.core.displayhook import DisplayHook

from ...checkpoints.replay import is_agent_cell
from ...render.escape import strip_ansi
from ...tools.kernel import KernelBridge
from .replay_source import CellClock, notebook_cells

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

RESULT_NAME = "_nbagent_result"
MAX_REPR = 100_000
_LOCKS: "weakref.WeakKeyDictionary[Any, threading.Lock]" = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def bridge_from_shell(shell: "InteractiveShell", *, allow_run: bool = True) -> KernelBridge:
    """The bridge the agent's kernel tools use; ``allow_run=False`` leaves kernel_run without a runner."""
    runner = ShellRunner(shell)
    return ShellBridge(shell, runner.run if allow_run else None, interrupt=runner.interrupt if allow_run else None)


class ShellBridge(KernelBridge):
    """A KernelBridge that also knows the shell's history and its notebook, for undo's restart-and-replay
    (nbagent.checkpoints.replay): execution counts, the cells' code, how long each took, and the
    notebook's cells to match them with (nbagent.jupyter.kernel.replay_source)."""

    def __init__(self, shell: "InteractiveShell", run_code, interrupt=None):
        super().__init__(shell.user_ns, run_code, hidden=shell.user_ns_hidden, interrupt=interrupt)
        self.shell = shell
        self.clock = CellClock.of(shell)
        self.times = self.clock.times

    def execution_count(self) -> int:
        return int(self.shell.execution_count)

    def history(self, upto: int) -> list[tuple[int, str, float | None]]:
        """The cells the user ran before execution count ``upto``: (count, code, seconds); the agent's
        prompts (``%agent``) and the cells that ran the agent are left out."""
        raw = self._raw()
        return [(n, raw[n], self.times.get(n)) for n in range(1, min(upto, len(raw)))
                if raw[n].strip() and not is_agent_cell(raw[n]) and n not in self.clock.agent_counts]

    def history_counts(self, upto: int) -> set[int]:
        """The execution counts below ``upto`` whose code the history holds: ``%reset in`` blanks the
        earlier ones, a shell without a history manager has none (the notebook fills those in)."""
        raw = self._raw()
        return {n for n in range(1, min(upto, len(raw))) if raw[n].strip()}

    def agent_counts(self) -> set[int]:
        """Execution counts of the cells that ran the agent (never replayed, from either source)."""
        return set(self.clock.agent_counts)

    def notebook_cells(self) -> list[dict] | None:
        """The cells of the notebook this kernel runs (live document or file), None without one."""
        return notebook_cells(self.shell)

    def _raw(self) -> list[str]:
        manager = self.shell.history_manager
        return list(getattr(manager, "input_hist_raw", None) or []) if manager is not None else []

    def reset(self) -> None:
        """Clear the user's variables as a restart would (imports and nbagent's own names are kept)."""
        ns, hidden = self.shell.user_ns, self.shell.user_ns_hidden
        for name in [n for n, v in list(ns.items()) if self.is_user_name(n, v) and n not in hidden
                     and not type(v).__module__.startswith("nbagent")]:  # the user's own agent stays
            del ns[name]


class ShellRunner:
    def __init__(self, shell: "InteractiveShell"):
        self.shell = shell
        with _LOCKS_GUARD:  # one lock per shell, shared by every runner built for it
            self.lock = _LOCKS.setdefault(shell, threading.Lock())
        self._running: int | None = None
        """The thread id running this runner's code, while it runs."""
        self._running_lock = threading.Lock()

    def interrupt(self) -> bool:
        """Raise KeyboardInterrupt in the code this runner is running; False when nothing runs."""
        with self._running_lock:
            if self._running is None:
                return False
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._running),
                                                       ctypes.py_object(KeyboardInterrupt))
            return True

    def run(self, code: str) -> dict[str, Any]:
        """Run ``code`` in the shell's namespace on this thread; see the module docstring for how."""
        shell = self.shell
        CellClock.of(shell).note_agent_call()  # the cell running the agent, if one does, is not replayed
        with (self.lock, _routed_output() as (out, err), _routed_tracebacks(shell) as tracebacks,
              _copied_displays(shell) as displays, _last_value_captured(shell)):
            saved = (shell.last_execution_succeeded, shell.last_execution_result, shell.displayhook.exec_result)
            result = None
            try:
                with self._running_lock:
                    self._running = threading.get_ident()
                try:
                    result = shell.run_cell(code, store_history=False)
                finally:
                    with self._running_lock:
                        self._running = None
            except KeyboardInterrupt:  # arrived outside the user's code (IPython catches it inside)
                tracebacks.append("KeyboardInterrupt")
            finally:
                (shell.last_execution_succeeded, shell.last_execution_result,
                 shell.displayhook.exec_result) = saved
            value = shell.user_ns.pop(RESULT_NAME, None)
        error = "\n".join(tracebacks) or _error_text(result)
        quiet = value is None or error or _quiet(code)
        shown = _image_bundle(shell, value) if not quiet else None
        if shown and not any(d.get(m) == v for d in displays for m, v in shown.items()):
            displays.append(shown)
        return {"stdout": out.getvalue(), "stderr": err.getvalue(),
                "result": None if quiet else _safe_repr(value), "error": error or None, "displays": displays}


class _LastValue(ast.NodeTransformer):
    """Turns the final expression of one thread's cells into ``RESULT_NAME = <expression>``.

    Working on the AST (an IPython ast_transformer) leaves the cell's text, and so its tracebacks,
    as written; other threads' cells pass through untouched. It must never raise: IPython
    unregisters a transformer that does.
    """

    def __init__(self, thread_id: int):
        self.thread_id = thread_id

    def visit_Module(self, node: ast.Module) -> ast.Module:
        if threading.get_ident() == self.thread_id and node.body and isinstance(node.body[-1], ast.Expr):
            last = node.body[-1]
            assign = ast.Assign(targets=[ast.Name(id=RESULT_NAME, ctx=ast.Store())], value=last.value)
            node.body[-1] = ast.fix_missing_locations(ast.copy_location(assign, last))
        return node


@contextmanager
def _last_value_captured(shell: "InteractiveShell") -> Iterator[None]:
    transformer = _LastValue(threading.get_ident())
    shell.ast_transformers.append(transformer)
    try:
        yield
    finally:
        if transformer in shell.ast_transformers:
            shell.ast_transformers.remove(transformer)


class _ThreadRouted:
    """A stream proxy: writes from one thread go to a buffer, all others to the real stream."""

    def __init__(self, real: Any, thread_id: int, buffer: io.StringIO):
        self._real, self._thread_id, self._buffer = real, thread_id, buffer

    def _mine(self) -> bool:
        return self._thread_id is not None and threading.get_ident() == self._thread_id

    def write(self, text: str) -> int:
        return self._buffer.write(text) if self._mine() else self._real.write(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self._mine():
            self._real.flush()

    def release(self) -> None:
        self._thread_id = None  # if someone else swapped the stream meanwhile, stay a pass-through

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@contextmanager
def _routed_output() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    me = threading.get_ident()
    proxies = {"stdout": _ThreadRouted(sys.stdout, me, out), "stderr": _ThreadRouted(sys.stderr, me, err)}
    sys.stdout, sys.stderr = proxies["stdout"], proxies["stderr"]
    try:
        yield out, err
    finally:
        for name, proxy in proxies.items():
            proxy.release()
            if getattr(sys, name) is proxy:
                setattr(sys, name, proxy._real)


@contextmanager
def _instance_patch(obj: Any, name: str, replacement: Any) -> Iterator[None]:
    """``obj.name`` is ``replacement`` for the block; put back after it only if still ours (another
    run may have patched it since), as an own attribute only where there was one before."""
    had_own = name in obj.__dict__
    original = getattr(obj, name)
    setattr(obj, name, replacement)
    try:
        yield
    finally:
        if obj.__dict__.get(name) is replacement:
            if had_own:
                setattr(obj, name, original)
            else:
                delattr(obj, name)


@contextmanager
def _routed_tracebacks(shell: "InteractiveShell") -> Iterator[list[str]]:
    """Catch the tracebacks this thread's run would show; other threads' still show as usual."""
    caught: list[str] = []
    me = threading.get_ident()
    original = shell._showtraceback

    def routed(etype, evalue, stb):
        if threading.get_ident() != me:
            return original(etype, evalue, stb)
        caught.append(strip_ansi(shell.InteractiveTB.stb2text(stb)))

    with _instance_patch(shell, "_showtraceback", routed):
        yield caught


@contextmanager
def _copied_displays(shell: "InteractiveShell") -> Iterator[list[dict]]:
    """Keep a copy of the MIME bundles this thread displays (an inline figure is flushed by a
    post_execute hook inside run_cell, on this thread); they are published as usual."""
    copied: list[dict] = []
    publisher = getattr(shell, "display_pub", None)
    if publisher is None:
        yield copied
        return
    me = threading.get_ident()
    original = publisher.publish

    def publish(data, *args, **kwargs):
        if threading.get_ident() == me and isinstance(data, dict):
            copied.append(dict(data))
        return original(data, *args, **kwargs)

    with _instance_patch(publisher, "publish", publish):
        yield copied


IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/svg+xml"})


def _image_bundle(shell: "InteractiveShell", value: Any) -> dict | None:
    """The images a last value would show as in a cell (a Figure, a PIL image, IPython's Image), by
    the shell's own formatters; None when it shows as text only."""
    formatter = getattr(shell, "display_formatter", None)
    if formatter is None:
        return None
    try:
        data, _ = formatter.format(value, include=IMAGE_MIMES)
    except Exception:  # a failing rich repr shows no image; the text repr is still there
        return None
    images = {k: v for k, v in (data or {}).items() if k in IMAGE_MIMES and v}
    return images or None


def _quiet(code: str) -> bool:
    """A trailing ";" hides the value, as in a cell (IPython's own test, which needs code that tokenizes)."""
    try:
        return bool(DisplayHook.semicolon_at_end_of_expression(code))
    except Exception:
        return code.rstrip().endswith(";")


def _error_text(result: Any) -> str:
    if result is None:
        return ""
    error = result.error_before_exec or result.error_in_exec
    return f"{type(error).__name__}: {error}" if error is not None else ""


def _safe_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ is the object's problem, not the run's
        return f"<{type(value).__name__} whose repr failed: {type(exc).__name__}: {exc}>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + f"… ({len(text):,} characters in all)"
