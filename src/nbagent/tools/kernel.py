"""Kernel tools: the user's live Python namespace, seen by the agent and (with approval) changed.

A ``KernelBridge`` is what the Jupyter layer hands the agent: the namespace dict and a function that
runs code in the kernel. This module never imports IPython (nbagent.jupyter.kernel.bridge builds
the bridge from an InteractiveShell), pandas or numpy: an object is a DataFrame only if pandas is
already loaded, so listing a namespace never imports anything.

Reading is cheap and bounded: no tool output here exceeds a few thousand characters, whatever the
size of the objects, and nothing is evaluated: ``kernel_inspect`` walks names, attributes and literal
subscripts itself.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import reprlib
import sys
import threading
import types
from collections import deque
from typing import Any, Callable, Iterable, Mapping

from ..errors import CommandKilled, ToolError
from ..render.escape import first_of, truncate
from .limits import limit_output
from .nbshrink import human_size
from .base import ToolSet, function_tool

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Left out of the listing even when the front end passes no hidden names (underscore names are too)."""
MAX_VARIABLES = 100
VARIABLES_LIMIT = 8_000
INSPECT_LIMIT = 4_000
_UNSET = object()


class KernelBridge:
    """The live namespace and, when the front end allows it, a way to run code in it.

    ``run_code(code)`` returns ``{"stdout": str, "stderr": str, "result": str | None, "error": str | None}``:
    what the code printed, the repr of its last expression's value (None when there is none) and the
    text of its traceback when it failed. ``hidden`` maps names the kernel itself put in the namespace
    to their values (IPython's ``user_ns_hidden``); a user who rebinds such a name sees it again.
    """

    def __init__(self, namespace: dict[str, Any], run_code: Callable[[str], dict] | None = None,
                 hidden: Mapping[str, Any] | Iterable[str] = (), interrupt: Callable[[], bool] | None = None):
        self.namespace = namespace
        self.run_code = run_code
        self.interrupt = interrupt
        """Interrupt the code ``run_code`` is running (as the kernel's interrupt would); False if none runs."""
        # A live mapping (not a copy): the kernel may hide more names later (%pylab pushes some).
        self.hidden = hidden if isinstance(hidden, Mapping) else {name: _UNSET for name in hidden}

    def is_user_name(self, name: str, value: Any) -> bool:
        if name.startswith("_") or name in IPYTHON_NAMES or isinstance(value, types.ModuleType):
            return False
        if name not in self.hidden:
            return True
        original = self.hidden[name]
        return original is not _UNSET and original is not value  # the user rebound a kernel name

    def user_items(self) -> list[tuple[str, Any]]:
        """The user's variables, sorted by name (a snapshot: the kernel may change them meanwhile)."""
        for _ in range(3):
            try:
                items = list(self.namespace.items())
                break
            except RuntimeError:  # the kernel's thread resized the dict mid-copy: try again
                continue
        else:
            raise ToolError("the kernel's namespace kept changing while being read; try again")
        return sorted((n, v) for n, v in items if self.is_user_name(n, v))

    def lookup(self, expr: str) -> Any:
        """``name``, then ``.attribute`` and ``[literal]`` steps: ``df.price``, ``data["rows"][0]``."""
        match = re.match(r"\s*([A-Za-z_]\w*)", expr)
        if not match:
            raise ToolError(f"{expr!r} is not a variable name")
        name = match.group(1)
        if name not in self.namespace:
            raise ToolError(f"no variable {name!r} in the kernel; kernel_variables lists them")
        value, pos, rest = self.namespace[name], match.end(), expr.rstrip()
        if not (isinstance(value, types.ModuleType) or self.is_user_name(name, value)):
            raise ToolError(f"{name!r} is the kernel's own name, not one of the user's variables: "
                            "kernel_inspect reads only those (kernel_variables lists them)")
        while pos < len(rest):
            _refuse_secrets(value, expr, within=True)
            step = _STEP.match(rest, pos)
            if not step:
                raise ToolError(f"cannot follow {rest[pos:]!r} in {expr!r}: only .attribute and [literal] "
                                "steps are allowed (nothing is evaluated)")
            value = _attribute(value, step.group(1), expr) if step.group(1) else _item(value, step.group(2), expr)
            pos = step.end()
        _refuse_secrets(value, expr, within=False)
        return value


KERNEL_PACKAGES = frozenset({"IPython", "ipykernel", "jupyter_client", "traitlets", "zmq", "comm", "tornado"})
"""Objects of these packages are the kernel's own: the shell, the kernel, its session and connection
key, its configuration. kernel_inspect neither shows nor walks into them (issue 26, finding 6)."""


def _refuse_secrets(value: Any, expr: str, *, within: bool) -> None:
    """Modules hold settings and keys (``os.environ``, a client's token): their contents, and the
    process environment however it is reached, are not read without the user's approval. Nor are the
    kernel's own objects (``exit._ip.kernel.session.key`` is the kernel's HMAC key)."""
    package = type(value).__module__.split(".")[0]
    if package in KERNEL_PACKAGES and not isinstance(value, types.ModuleType):
        raise ToolError(f"{expr!r} reaches the kernel's own objects ({type_name(value)}), which hold its "
                        "configuration and keys: kernel_inspect reads only the user's variables")
    if within and isinstance(value, types.ModuleType):
        raise ToolError(f"{expr!r} reaches into the module {value.__name__}: kernel_inspect does not read "
                        "modules' contents (they can hold secrets); kernel_run can, with the user's approval")
    if isinstance(value, os._Environ) or value is os.environ:
        raise ToolError(f"{expr!r} is the process environment, which holds secrets: kernel_inspect does not "
                        "show it; kernel_run can read a named variable, with the user's approval")


_STEP = re.compile(r"\s*(?:\.\s*([A-Za-z_]\w*)|\[([^\[\]]+)\])")


def _attribute(value: Any, attr: str, expr: str) -> Any:
    if attr.startswith("_"):  # private and dunder: the way from a user's object to the kernel's internals
        raise ToolError(f"{expr!r}: private attributes (._name) are not inspected; kernel_run can, with the "
                        "user's approval")
    try:
        return getattr(value, attr)
    except AttributeError:
        pass
    try:
        return value[attr]  # df.col for a column whose name is not an attribute
    except Exception:
        raise ToolError(f"{expr!r}: {type(value).__name__} has no attribute or key {attr!r}") from None


def _item(value: Any, key_text: str, expr: str) -> Any:
    try:
        key = ast.literal_eval(key_text.strip())
    except (ValueError, SyntaxError):
        raise ToolError(f"{expr!r}: [{key_text}] is not a literal key (a string, number or tuple)") from None
    try:
        return value[key]
    except Exception as exc:
        raise ToolError(f"{expr!r}: [{key_text}] failed: {type(exc).__name__}: {exc}") from None


# ----- one-line descriptions ----------------------------------------------------------------------

def _pandas():
    return sys.modules.get("pandas")


def _numpy():
    return sys.modules.get("numpy")


def type_name(value: Any) -> str:
    kind = type(value)
    module = kind.__module__.split(".")[0]
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def shape_of(value: Any) -> str:
    """"1000x5", "len 3", "(a, b=1)" for callables, or "" when unknown (never calls a dynamic __getattr__)."""
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        try:
            return truncate(str(inspect.signature(value)), 60)
        except (TypeError, ValueError):
            return ""
    if hasattr(type(value), "shape"):  # declared on the class, so not an arbitrary __getattr__
        try:
            shape = value.shape
            if isinstance(shape, tuple):
                return "x".join(str(n) for n in shape) or "scalar"
        except Exception:
            return ""
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset, deque, range)):
        return f"len {len(value):,}"
    return ""


def size_of(value: Any) -> str:
    """Memory held, as exact as is cheap: nbytes for arrays, pandas' count, a sampled estimate for containers."""
    np, pd = _numpy(), _pandas()
    try:
        if np is not None and isinstance(value, np.ndarray):
            return human_size(value.nbytes)
        if pd is not None and isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
            deep = len(value) <= 200_000  # deep=True walks every string: only where that is quick
            total = value.memory_usage(deep=deep)
            total = int(total.sum()) if hasattr(total, "sum") else int(total)
            return human_size(total) if deep else f">= {human_size(total)}"
        if isinstance(value, (list, tuple, set, frozenset, deque, dict)):
            return "~" + human_size(_container_size(value))
        return human_size(sys.getsizeof(value))
    except Exception:
        return ""


def _container_size(value: Any) -> int:
    """The container plus its elements, estimated from the first 100 (keys and values for dicts)."""
    items = list(value.items())[:100] if isinstance(value, dict) else [v for _, v in zip(range(100), value)]
    if not items:
        return sys.getsizeof(value)
    flat = [x for pair in items for x in pair] if isinstance(value, dict) else items
    per_item = sum(sys.getsizeof(x) for x in flat) / len(items)
    return int(sys.getsizeof(value) + per_item * len(value))


# ----- full descriptions --------------------------------------------------------------------------

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset = 3, 20, 20, 20, 20
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 400, 2_000, 100


def describe(name: str, value: Any) -> str:
    pd, np = _pandas(), _numpy()
    if pd is not None and isinstance(value, pd.DataFrame):
        return _describe_frame(name, value)
    if pd is not None and isinstance(value, pd.Series):
        return _describe_series(name, value)
    if np is not None and isinstance(value, np.ndarray):
        return _describe_array(name, value, np)
    if callable(value) and (inspect.isroutine(value) or inspect.isclass(value)):
        return _describe_callable(name, value)
    return _describe_object(name, value)


def _section(title: str, make: Callable[[], str]) -> str:
    """One part of a description; a failure (the object changed meanwhile, an odd dtype) is reported, not raised."""
    try:
        return f"{title}:\n{make()}"
    except Exception as exc:
        return f"{title}: unavailable ({type(exc).__name__}: {truncate(str(exc), 200)})"


def _describe_frame(name: str, df: Any) -> str:
    rows, cols = df.shape
    head = f"{name}: pandas.DataFrame, {rows:,} rows x {cols:,} columns, {size_of(df)}; index {type(df.index).__name__}"
    counts = df.dtypes.astype(str).value_counts()
    kinds = ", ".join(f"{kind} ({n})" for kind, n in counts.items())
    listed = df.dtypes.astype(str).head(40).to_string()
    more = f"\n… {cols - 40:,} more columns" if cols > 40 else ""
    sample = df if rows <= 1_000_000 else df.sample(100_000, random_state=0)
    about = "describe()" if sample is df else "describe() of a 100,000-row sample"
    parts = [head, f"dtypes: {kinds}\n{listed}{more}",
             _section("null counts", lambda: _nulls(df)),
             _section("head(5)", lambda: df.head(5).to_string(max_cols=12, max_colwidth=30)),
             _section(about, lambda: sample.describe().to_string(max_cols=12, max_colwidth=30))]
    return "\n\n".join(parts)


def _nulls(df: Any) -> str:
    nulls = df.isna().sum()
    nulls = nulls[nulls > 0]
    if nulls.empty:
        return "none"
    shown = nulls.sort_values(ascending=False).head(30).to_string()
    return shown + (f"\n… {len(nulls) - 30} more columns with nulls" if len(nulls) > 30 else "")


def _describe_series(name: str, s: Any) -> str:
    head = f"{name}: pandas.Series {s.name!r}, {len(s):,} values, dtype {s.dtype}, {size_of(s)}"
    parts = [head, f"nulls: {int(s.isna().sum()):,}",
             _section("head(5)", lambda: s.head(5).to_string()),
             _section("describe()", lambda: s.describe().to_string())]
    return "\n\n".join(parts)


def _describe_array(name: str, arr: Any, np: Any) -> str:
    head = f"{name}: numpy.ndarray, shape {arr.shape}, dtype {arr.dtype}, {human_size(arr.nbytes)}"
    parts = [head, _section("sample", lambda: np.array2string(arr, threshold=60, edgeitems=3, max_line_width=110))]
    if arr.size and np.issubdtype(arr.dtype, np.number) and not np.issubdtype(arr.dtype, np.complexfloating):
        parts.append(_section("stats", lambda: _array_stats(arr, np)))
    return "\n\n".join(parts)


def _array_stats(arr: Any, np: Any) -> str:
    flat = arr.ravel()
    sample = flat if flat.size <= 10_000_000 else flat[:: flat.size // 10_000_000 + 1]
    about = "" if sample is flat else f" (of every {flat.size // 10_000_000 + 1}th value)"
    with np.errstate(all="ignore"):
        nans = int(np.isnan(sample).sum()) if np.issubdtype(arr.dtype, np.floating) else 0
        stats = (f"min {np.nanmin(sample):.6g}, max {np.nanmax(sample):.6g}, mean {np.nanmean(sample):.6g}, "
                 f"std {np.nanstd(sample):.6g}")
    return stats + (f", NaN {nans:,}" if nans else "") + about


def _describe_callable(name: str, value: Any) -> str:
    kind = "class" if inspect.isclass(value) else "function"
    doc = inspect.getdoc(value) or "(no docstring)"
    doc = "\n".join(doc.splitlines()[:15])
    return f"{name}: {kind} {getattr(value, '__qualname__', name)}{shape_of(value)}\n\n{doc}"


def _describe_object(name: str, value: Any) -> str:
    facts = [type_name(value)]
    shape = shape_of(value)
    if shape:
        facts.append(shape)
    size = size_of(value)
    if size:
        facts.append(size)
    parts = [f"{name}: {', '.join(facts)}", _section("repr", lambda: _REPR.repr(value))]
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict) and attrs and not isinstance(value, (types.ModuleType, type)):
        names = [a for a in attrs if not a.startswith("_")]
        if names:
            parts.append("attributes: " + first_of(names, 40))
    return "\n\n".join(parts)


# ----- the tools ----------------------------------------------------------------------------------

def _bridge(ctx) -> KernelBridge:
    if ctx.kernel is None:
        raise ToolError("the agent is not running inside a kernel: there is no live namespace")
    return ctx.kernel


def kernel_variables(ctx) -> str:
    """List the variables of the user's live Python kernel: name, type, shape or length, memory size.

    Modules and the kernel's own names (In, Out, _...) are left out.
    """
    items = _bridge(ctx).user_items()
    if not items:
        return "the kernel's namespace holds no user variables yet"
    rows = [("name", "type", "shape / len", "size")]
    for name, value in items[:MAX_VARIABLES]:
        rows.append((truncate(name, 30), truncate(type_name(value), 30), shape_of(value), size_of(value)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip() for r in rows]
    more = f"\n… {len(items) - MAX_VARIABLES} more (kernel_inspect takes any name)" if len(items) > MAX_VARIABLES else ""
    text = f"{len(items)} variable(s):\n" + "\n".join(lines) + more
    return limit_output(text, VARIABLES_LIMIT)


def kernel_inspect(ctx, name: str) -> str:
    """Describe one object in the user's live kernel.

    A DataFrame: shape, dtypes, null counts, head and describe(); an array: shape, dtype, a sample and
    stats; a function or class: signature and docstring; anything else: its type and a shortened repr.

    Args:
        name: A variable name, optionally with .attribute and [literal] steps: df, df.price, cfg["paths"][0].
    """
    value = _bridge(ctx).lookup(name)
    return limit_output(describe(name.strip(), value), INSPECT_LIMIT)


RUN_TIMEOUT, RUN_TIMEOUT_MAX = 120.0, 3600.0


def kernel_run(ctx, code: str, timeout: float | None = None) -> str:
    """Run Python code in the user's live kernel, with its variables and imports; the user approves each run.

    Returns what the code printed, the value of its last expression and any traceback. Changes it makes
    to the namespace stay: prefer kernel_inspect to look, and run code only to compute or change.
    Stop and Abort interrupt it, as the kernel's interrupt button would.

    Args:
        code: Python code (IPython syntax such as %magics works too).
        timeout: Seconds before the run is interrupted (default 120, at most 3600).
    """
    bridge = _bridge(ctx)
    if bridge.run_code is None:
        raise ToolError("this kernel does not let the agent run code")
    seconds = run_timeout(timeout)
    outcome, why = _run_interruptibly(ctx, bridge, code, seconds)
    return run_report(ctx, outcome, why, seconds)


def run_timeout(timeout: float | None) -> float:
    return min(max(float(timeout or RUN_TIMEOUT), 0.1), RUN_TIMEOUT_MAX)


def run_report(ctx, outcome: dict, why: str | None, seconds: float) -> str:
    """kernel_run's answer from a run's outcome (see KernelBridge) and why it was interrupted
    ("stopped", "timeout" or None); a failed or interrupted run raises, as a tool error."""
    limit = max(1_000, ctx.config.output_limit // 3)
    parts = [f"{label}:\n{limit_output(text.rstrip(chr(10)), limit)}"
             for label, text in (("stdout", outcome.get("stdout")), ("stderr", outcome.get("stderr")),
                                 ("value", outcome.get("result")), ("displayed", _displays(ctx, outcome, limit)),
                                 ("error", outcome.get("error")))
             if text]
    text = "\n\n".join(parts) or "ran: no output and no value"
    if why == "stopped":
        raise CommandKilled(f"killed by the user (the run was interrupted)\n\n{text}")
    if why == "timeout":
        raise ToolError(f"interrupted after {seconds:g} s (kernel_run's timeout); what it did so far:\n\n{text}")
    if outcome.get("error"):
        raise ToolError(text)
    return text


def _displays(ctx, outcome: dict, limit: int) -> str:
    """What the run displayed (figures, display() calls), shrunk as notebook outputs are; their images
    go to a model that can see (nbagent.images)."""
    bundles = [b for b in outcome.get("displays") or () if isinstance(b, dict)]
    if not bundles:
        return ""
    from .nbshrink import OutputBudget

    budget = OutputBudget(max(400, limit // 4), limit, {}, ctx.image_sink())
    return "\n".join(budget.render({"output_type": "display_data", "data": b}, f"kernel_run display {i}")
                     for i, b in enumerate(bundles, 1))


def _run_interruptibly(ctx, bridge: KernelBridge, code: str, seconds: float) -> tuple[dict, str | None]:
    """Run ``code``; Stop/Abort (the tracker's stop hooks) and the timeout interrupt it.
    Returns the outcome and why it was interrupted ("stopped", "timeout" or None)."""
    why: list[str] = []

    def interrupt(reason: str) -> int:
        if bridge.interrupt is not None and bridge.interrupt():
            why.append(reason)
            return 1
        return 0

    run_code = bridge.run_code
    if run_code is None:
        raise ToolError("this kernel cannot run code for the agent")
    processes = getattr(ctx, "processes", None)
    remove: Callable[[], None] = (processes.add_stop_hook(lambda: interrupt("stopped")) if processes is not None
                                  else (lambda: None))
    timer = threading.Timer(seconds, interrupt, args=("timeout",))
    timer.daemon = True
    timer.start()
    try:
        outcome = run_code(code)
    finally:
        timer.cancel()
        remove()
    return outcome, (why[0] if why else None)


def _always_ask(t):
    """kernel_run asks even in "auto" mode, unless the configuration opts out (kernel_run_auto)."""
    t.always_ask = True
    return t


KERNEL = ToolSet("kernel", [
    function_tool(kernel_variables, read_only=True),
    function_tool(kernel_inspect, read_only=True),
    # Code in the user's live kernel asks even in "auto" mode, unless configured otherwise.
    function_tool(kernel_run, approval="always_ask", runs="kernel"),
], description="See the user's live kernel namespace; run code there with approval")
