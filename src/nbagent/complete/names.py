"""What a completion knows of the kernel: its variables' names and types, DataFrame columns, the imports.

Read in the kernel (by nbagent.jupyter.kernel.probe for the server, or from any KernelBridge) and
sent as a small JSON object: names, types, shapes and column names with their dtypes, never values
or outputs. Nothing is evaluated and nothing imported (a DataFrame is one only if pandas is loaded),
and every list is capped, so a namespace of thousands of names answers in a few kilobytes.
"""

from __future__ import annotations

import types
from typing import Any

from ..tools.kernel import KernelBridge, shape_of, type_name

MAX_NAMES = 60
"""Variables described at most (the newest cells' names are not known here: the first by name)."""
MAX_COLUMNS = 40
"""Columns listed per DataFrame."""
MAX_IMPORTS = 40


def kernel_names(bridge: KernelBridge) -> dict[str, Any]:
    """``{"variables": [{"name", "type", "shape"?, "columns"?: [[name, dtype], ...], "dtype"?}],
    "imports": ["import numpy as np", "from math import sqrt", ...]}``."""
    variables = [_variable(name, value) for name, value in bridge.user_items()[:MAX_NAMES]]
    return {"variables": variables, "imports": _imports(bridge)}


def _variable(name: str, value: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name, "type": type_name(value)}
    if not isinstance(value, types.FunctionType):
        shape = shape_of(value)
        if shape:
            row["shape"] = shape
    try:
        columns = _columns(value)
    except Exception:  # an odd frame (or one changed meanwhile): its name and type are enough
        columns = None
    if columns is not None:
        row["columns"] = columns
    dtype = _dtype(value) if hasattr(type(value), "dtype") else ""  # declared on the class: no __getattr__
    if dtype:
        row["dtype"] = dtype
    return row


def _columns(value: Any) -> list[list[str]] | None:
    import sys

    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(value, pd.DataFrame):
        return None
    dtypes = value.dtypes.head(MAX_COLUMNS)
    return [[str(col), str(dtype)] for col, dtype in dtypes.items()]


def _dtype(value: Any) -> str:
    """A Series' or an array's dtype ("" for anything else)."""
    try:
        dtype = value.dtype
    except Exception:
        return ""
    return str(dtype) if type(dtype).__module__.split(".")[0] in ("numpy", "pandas") else ""


def _imports(bridge: KernelBridge) -> list[str]:
    """The import lines that would give the namespace its modules and imported functions and classes."""
    lines: list[str] = []
    for name, value in _items(bridge):
        if name.startswith("_") or name in bridge.hidden:
            continue
        if isinstance(value, types.ModuleType):
            module = value.__name__
            lines.append(f"import {module}" if module == name else f"import {module} as {name}")
        elif isinstance(value, (types.FunctionType, type, types.BuiltinFunctionType)):
            module = getattr(value, "__module__", None) or ""
            if module and module not in ("__main__", "builtins") and not module.startswith("IPython"):
                real = getattr(value, "__name__", name)
                lines.append(f"from {module} import {real}" + (f" as {name}" if real != name else ""))
        if len(lines) >= MAX_IMPORTS:
            break
    return lines


def _items(bridge: KernelBridge) -> list[tuple[str, Any]]:
    for _ in range(3):
        try:
            return sorted(bridge.namespace.items(), key=lambda item: item[0])
        except RuntimeError:  # the kernel's thread resized the dict mid-copy: try again
            continue
    return []
