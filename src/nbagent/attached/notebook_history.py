"""What a notebook document already knows: its last executed cells and their errors, as a source's text.

The server offers it for the notebook active in JupyterLab (the side panel asks), read from the saved
document: the cells with an execution count, newest last, each with a short form of its output, then
the newest error with its traceback. The same shape as the kernel's own history (jupyter/kernel_context).
"""

from __future__ import annotations

from typing import Any

from ..render.escape import strip_ansi, truncate

CELLS = 5
CODE_MAX = 1_500
OUT_MAX = 300
TRACEBACK_MAX = 4_000


def notebook_history(nb: dict[str, Any], path: str = "") -> str:
    """The text of the ``notebook`` source for a parsed .ipynb (empty when no cell has run)."""
    cells = [c for c in nb.get("cells") or [] if isinstance(c, dict) and c.get("cell_type") == "code"
             and isinstance(c.get("execution_count"), int)]
    if not cells:
        return ""
    cells.sort(key=lambda c: c["execution_count"])
    parts = [f"Notebook {path} (its last {min(len(cells), CELLS)} executed cells, by execution count; "
             "outputs shortened):"]
    parts += [_cell(c) for c in cells[-CELLS:]]
    error = _newest_error(cells)
    if error:
        parts.append(error)
    return "\n\n".join(parts)


def _cell(cell: dict[str, Any]) -> str:
    count = cell["execution_count"]
    text = f"In [{count}]:\n{truncate(_joined(cell.get('source')), CODE_MAX)}"
    for output in cell.get("outputs") or []:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "error":
            text += f"\nError: {truncate(str(output.get('ename', '')) + ': ' + str(output.get('evalue', '')), OUT_MAX)}"
        elif kind == "execute_result":
            plain = _joined((output.get("data") or {}).get("text/plain"))
            text += f"\nOut[{count}]: {truncate(' '.join(plain.split()), OUT_MAX)}"
        elif kind == "stream":
            tail = _joined(output.get("text")).strip().splitlines()[-3:]
            if tail:
                text += f"\n({output.get('name', 'stdout')}) " + truncate(" | ".join(tail), OUT_MAX)
    return strip_ansi(text)


def _newest_error(cells: list[dict[str, Any]]) -> str:
    for cell in reversed(cells):
        for output in cell.get("outputs") or []:
            if isinstance(output, dict) and output.get("output_type") == "error":
                trace = strip_ansi("\n".join(str(line) for line in output.get("traceback") or []))
                if len(trace) > TRACEBACK_MAX:
                    trace = "…\n" + trace[-TRACEBACK_MAX:]
                return f"Newest error (in cell In [{cell['execution_count']}]):\n{trace}"
    return ""


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return str(value or "")


