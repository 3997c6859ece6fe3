"""Hidden state read from a notebook's text: names used before any cell defines them, counts out of order.

Both are read from the stored notebook, without running it (notebook_check runs it too). Names come
from each code cell's syntax tree: what it binds anywhere (assignments, imports, def, class, for,
with, except, function arguments) and what it reads. A name read by a cell, bound by no cell above it
and not a builtin exists only in the live kernel (or comes from a later cell run earlier). IPython
syntax is blanked first (``%magic``, ``!shell``, ``x = !ls``); a cell magic other than the timing and
capture ones (``%%bash`` ...) is not Python and is skipped, as is a cell that does not parse.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

KERNEL_NAMES = frozenset({"get_ipython", "display", "In", "Out", "exit", "quit", "__name__", "__doc__"})
"""Names IPython's namespace provides to every cell."""
_IPYTHON_HISTORY = re.compile(r"^_(i{1,3}|\d+|i\d+|oh|ih|dh|_{1,2})?$")
"""``_``, ``__``, ``_5``, ``_i3``: the kernel's own output and input history."""
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun")
_SHELL_ASSIGN = re.compile(r"^(\s*[\w.,\s]+=\s*)[!%].*$")


@dataclass
class HiddenName:
    cell_index: int
    cell_id: str
    name: str
    defined_later_in: str | None = None
    """The id of a later cell that binds it (None: no cell binds it)."""


@dataclass
class StaticReport:
    hidden: list[HiddenName] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    """Ids of code cells that are not Python (a cell magic) or do not parse: not analysed."""
    star_import_in: str | None = None
    """The first cell with ``from m import *``: names read after it may come from there."""
    order: list[str] = field(default_factory=list)
    """Lines about execution counts out of order or skipped, from the stored notebook."""


def python_source(source: str) -> str | None:
    """The cell as plain Python (IPython syntax blanked), or None when it is not Python."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        if not lines[0].lstrip().startswith(_PYTHON_CELL_MAGICS):
            return None
        lines = lines[1:]
    out = []
    for line in lines:
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith(("%", "!")) or stripped.endswith("?") and not stripped.startswith("#"):
            out.append(f"{indent}pass")
        elif _SHELL_ASSIGN.match(line):
            out.append(_SHELL_ASSIGN.sub(r"\1None", line))
        else:
            out.append(line)
    return "\n".join(out)


def names_of(tree: ast.AST) -> tuple[set[str], set[str], bool]:
    """(names bound anywhere in the tree, names read, whether it has a star import)."""
    bound: set[str] = set()
    read: set[str] = set()
    star = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                else:
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound, read, star


def analyse(cells: list[dict]) -> StaticReport:
    """The hidden-state report of a notebook's cells (nbformat 4 dicts, in order)."""
    report = StaticReport()
    code = [(i, c) for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    parsed: list[tuple[int, str, set[str], set[str]]] = []
    for index, cell in code:
        cid = str(cell.get("id") or f"#{index}")
        text = python_source(_text(cell.get("source", "")))
        try:
            tree = ast.parse(text) if text is not None else None
        except SyntaxError:
            tree = None
        if tree is None:
            report.unparsed.append(cid)
            continue
        bound, read, star = names_of(tree)
        if star and report.star_import_in is None:
            report.star_import_in = cid
        parsed.append((index, cid, bound, read))
    known = set(dir(builtins)) | KERNEL_NAMES
    defined: set[str] = set()
    for position, (index, cid, bound, read) in enumerate(parsed):
        for name in sorted(read - bound - defined - known):
            if _IPYTHON_HISTORY.match(name):
                continue
            later = next((c for _, c, b, _ in parsed[position + 1:] if name in b), None)
            report.hidden.append(HiddenName(index, cid, name, later))
        defined |= bound
    report.order = execution_order(cells)
    return report


def execution_order(cells: list[dict]) -> list[str]:
    """Stored execution counts that are not increasing from top to bottom, and skipped counts."""
    runs = [(str(c.get("id") or f"#{i}"), c["execution_count"]) for i, c in enumerate(cells)
            if c.get("cell_type") == "code" and isinstance(c.get("execution_count"), int)]
    lines = []
    for (prev_id, prev), (cid, count) in zip(runs, runs[1:]):
        if count <= prev:
            lines.append(f"cell {cid} [{count}] comes after cell {prev_id} [{prev}] but ran before it")
    counts = sorted(count for _, count in runs)
    if counts and not lines and counts[-1] - counts[0] + 1 > len(counts):
        lines.append(f"execution counts {counts[0]}..{counts[-1]} skip {counts[-1] - counts[0] + 1 - len(counts)} "
                     "number(s): cells were run again or run and deleted (their effects may live in the kernel only)")
    return lines


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)
