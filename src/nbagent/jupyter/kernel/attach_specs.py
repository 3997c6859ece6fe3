"""What ``%agent fix`` and ``%agent --attach`` take from the kernel: its last error, an output, a variable.

``%agent fix`` turns the kernel's last error into a prompt: the cell that raised it (its notebook cell id
when the notebook holds that source), the traceback, and the variables the cell and the traceback name
(type and shape). ``--attach SPEC`` attaches ``Out[5]`` (an execution's result), a notebook cell id (that
cell's outputs, as the notebook holds them) or a variable: each is shown as a cell would show it (the
shell's own formatters, so a figure is its PNG), and so reaches a model that can see as an image.
"""

from __future__ import annotations

import keyword
import re
import sys
from typing import TYPE_CHECKING, Any, cast

from ...errors import NbagentError
from ...render.escape import strip_ansi
from ...tools.kernel import shape_of, type_name

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

MAX_NAMES = 12
TRACE_LIMIT = 6_000
_OUT = re.compile(r"^(?:Out\[(\d+)\]|_(\d+))$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class AttachError(NbagentError):
    """A spec that names nothing the kernel has."""


def last_error_prompt(shell: "InteractiveShell", cells: list[dict] | None, extra: str = "") -> str:
    """The prompt ``%agent fix`` sends; raises AttachError when the kernel has no error to fix."""
    etype, value, tb = getattr(sys, "last_type", None), getattr(sys, "last_value", None), getattr(sys, "last_traceback", None)
    if etype is None or value is None:
        raise AttachError("the kernel has no error to fix: run the failing cell first")
    count, source = _failing_cell(shell, tb)
    trace = strip_ansi(shell.InteractiveTB.stb2text(shell.InteractiveTB.structured_traceback(etype, value, tb)))
    if len(trace) > TRACE_LIMIT:
        trace = trace[:TRACE_LIMIT // 2] + "\n[... cut ...]\n" + trace[-TRACE_LIMIT // 2:]
    cell_id = next((c.get("id") for c in cells or () if c.get("cell_type") == "code"
                    and _text(c.get("source")).strip() == source.strip() and source.strip()), None)
    where = f"cell In[{count}]" if count else "the last cell run"
    if cell_id:
        where += f" (notebook cell id {cell_id})"
    lines = [f"Fix the error {where} raised: {etype.__name__}: {value}", "", "The cell:", "```python", source.rstrip(),
             "```", "", "The traceback:", "```", trace.rstrip(), "```"]
    names = mentioned(shell, source + "\n" + trace)
    if names:
        lines += ["", "Variables it names, as the kernel holds them now:", *names]
    lines += ["", "Propose the fix as an edit of that cell" + (" (notebook_edit)" if cell_id else "")
              + "; do not run it unless asked."]
    if extra:
        lines += ["", extra]
    return "\n".join(lines)


def _failing_cell(shell: "InteractiveShell", tb: Any) -> tuple[int | None, str]:
    """(execution count, source) of the cell the traceback passes through last; the last input if none."""
    names = getattr(shell.compile, "_filename_map", {}) or {}
    found: int | None = None
    while tb is not None:
        count = names.get(tb.tb_frame.f_code.co_filename)
        if isinstance(count, int):
            found = count
        tb = tb.tb_next
    inputs = shell.user_ns.get("In") or []
    if found is not None and 0 < found < len(inputs):
        return found, inputs[found]
    for count in range(len(inputs) - 1, 0, -1):  # the newest input that is not a %agent line
        if not inputs[count].lstrip().startswith(("%agent", "get_ipython().run_line_magic('agent'")):
            return count, inputs[count]
    return None, ""


def mentioned(shell: "InteractiveShell", text: str) -> list[str]:
    """'- name: type shape' for the user's variables whose names occur in ``text``."""
    ns, hidden = shell.user_ns, getattr(shell, "user_ns_hidden", {})
    out = []
    for name in dict.fromkeys(_NAME.findall(text)):
        if keyword.iskeyword(name) or name.startswith("_") or name in hidden or name not in ns:
            continue
        value = ns[name]
        if type(value).__name__ == "module" or callable(value) and not hasattr(value, "shape"):
            continue
        shape = shape_of(value)
        out.append(f"- {name}: {type_name(value)}" + (f" {shape}" if shape and shape != "-" else ""))
        if len(out) >= MAX_NAMES:
            break
    return out


def resolve(shell: "InteractiveShell", spec: str, cells: list[dict] | None) -> list[Any]:
    """What ``--attach SPEC`` attaches (items for nbagent.engine.attachments.attach)."""
    spec = spec.strip()
    match = _OUT.match(spec)
    if match:
        count = int(match.group(1) or match.group(2))
        outputs = shell.user_ns.get("Out") or {}
        if count not in outputs:
            raise AttachError(f"Out[{count}] does not exist (cells whose last line shows a value have one)")
        return [shown(shell, outputs[count])]
    for cell in cells or ():
        if cell.get("id") == spec:
            source = {"output_type": "stream", "name": "source", "text": f"cell {spec}:\n{_text(cell.get('source'))}"}
            return [source, *[dict(o) for o in cell.get("outputs") or ()]]
    if spec.isidentifier() and spec in shell.user_ns:
        return [shown(shell, shell.user_ns[spec])]
    raise AttachError(f"--attach {spec}: not Out[N], a cell id of this notebook, nor a variable of the kernel")


def shown(shell: "InteractiveShell", value: Any) -> dict:
    """``value`` as a cell shows it: a display_data output of the shell's own formatters."""
    data, _ = cast(Any, shell.display_formatter).format(value)
    return {"output_type": "display_data", "data": dict(data or {"text/plain": repr(value)})}


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source or "")
