"""What one completion sends: the cell around the cursor, the notebook's earlier cells, the kernel's names.

A ``CompletionRequest`` holds what the editor and the server know; ``FimPrompt`` is that cut to size
as the prefix and suffix a fill-in-the-middle endpoint takes (the notebook's header and earlier cells
before the cell's own prefix; the cell's suffix and a little of the next cells after), and
``chat_messages`` is the short chat prompt for a server without one. Outputs never go in: only cell
sources, and the kernel's names, types and columns (nbagent.complete.names). Every part has a budget in
characters, and the part nearest the cursor is what a cut keeps.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

PREFIX_CHARS = 3_000
"""The current cell before the cursor: its end is kept."""
SUFFIX_CHARS = 1_000
EARLIER_CHARS = 3_000
"""The notebook's earlier cells together: the nearest are kept."""
CELL_CHARS = 1_200
"""One earlier cell: its start is kept (imports and definitions come first)."""
LATER_CHARS = 400
NAMES_CHARS = 2_000
CELL_SEPARATOR = "\n\n# %%\n"


@dataclass
class CompletionRequest:
    prefix: str
    suffix: str = ""
    path: str = ""
    cells_before: list[dict[str, Any]] = field(default_factory=list)
    """The notebook's cells above the current one (``{"cell_type", "source"}``), nearest last."""
    cells_after: list[dict[str, Any]] = field(default_factory=list)
    names: dict[str, Any] | None = None
    """The kernel's names (nbagent.complete.names.kernel_names), None without a kernel."""


@dataclass(frozen=True)
class FimPrompt:
    header: str
    """The notebook's name, the kernel's imports and variables, as Python comments."""
    prefix: str
    """The earlier cells, then the cell up to the cursor (the header not included)."""
    suffix: str

    def key(self, model: str, mode: str) -> str:
        """The cache key: the same model, way and text give the same completion."""
        text = json.dumps([model, mode, self.header, self.prefix, self.suffix])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fim_prompt(request: CompletionRequest) -> FimPrompt:
    earlier = _earlier(request.cells_before)
    current = request.prefix[-PREFIX_CHARS:]
    later = _later(request.cells_after)
    prefix = f"{earlier}{CELL_SEPARATOR}{current}" if earlier else current
    return FimPrompt(_header(request), prefix, request.suffix[:SUFFIX_CHARS] + later)


CHAT_SYSTEM = ("You complete Python code in a Jupyter notebook cell. Reply with only the text to insert at "
               "<CURSOR>: no explanation, no code fence, nothing that repeats the code around it. Use the "
               "kernel's variable and column names exactly as listed. Reply with nothing if nothing fits.")


def chat_messages(prompt: FimPrompt) -> list[dict[str, str]]:
    user = (f"{prompt.header}\n\n{prompt.prefix}<CURSOR>{prompt.suffix}" if prompt.header
            else f"{prompt.prefix}<CURSOR>{prompt.suffix}")
    return [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": user}]


def _header(request: CompletionRequest) -> str:
    lines = [f"# Jupyter notebook {request.path}"] if request.path else []
    names = request.names or {}
    imports = [str(line) for line in names.get("imports") or []]
    if imports:
        lines.append("# Imported in the kernel: " + "; ".join(imports))
    variables = names.get("variables") or []
    if variables:
        lines.append("# Variables in the kernel:")
        lines += [f"#   {_variable_line(v)}" for v in variables if isinstance(v, dict)]
    text = "\n".join(lines)
    return text if len(text) <= NAMES_CHARS else text[:NAMES_CHARS].rsplit("\n", 1)[0]


def _variable_line(v: dict[str, Any]) -> str:
    line = f"{v.get('name')}: {v.get('type')}"
    if v.get("shape"):
        line += f" ({v['shape']})"
    if v.get("dtype"):
        line += f" dtype {v['dtype']}"
    columns = v.get("columns")
    if columns:
        line += ", columns " + ", ".join(f"{c[0]!r} {c[1]}" for c in columns if isinstance(c, list) and len(c) == 2)
    return line


def _cell_text(cell: dict[str, Any]) -> str:
    source = cell.get("source") or ""
    source = "".join(source) if isinstance(source, list) else str(source)
    if len(source) > CELL_CHARS:
        source = source[:CELL_CHARS] + "\n# ..."
    if cell.get("cell_type") == "code":
        return source
    return "\n".join("# " + line for line in source.splitlines())  # Markdown, as comments


def _earlier(cells: list[dict[str, Any]]) -> str:
    kept: list[str] = []
    used = 0
    for cell in reversed(cells):
        text = _cell_text(cell)
        if not text.strip():
            continue
        if used + len(text) > EARLIER_CHARS:
            break
        kept.append(text)
        used += len(text) + len(CELL_SEPARATOR)
    return CELL_SEPARATOR.join(reversed(kept))


def _later(cells: list[dict[str, Any]]) -> str:
    text = CELL_SEPARATOR.join(t for t in (_cell_text(c) for c in cells[:2]) if t.strip())
    return (CELL_SEPARATOR + text)[:LATER_CHARS] if text else ""
