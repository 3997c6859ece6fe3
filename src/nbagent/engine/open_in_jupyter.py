"""What the user has open, sent with a prompt: the active notebook, the active cell and selected text.

With the panel's Explain / Ask / Fix on an output, it also names which of the cell's outputs the prompt
attaches (the output itself comes as ``attach``: nbformat dicts, checked here for shape and size).

The side panel sends it with each prompt while the user keeps its chip; ``%agent``/``%%agent`` send
their own notebook and cell. It follows the prompt as a short tagged block, so "explain this
cell", "fix the cell above" and "add a plot below" need no path. Everything in it came from the
client: it is checked for type and size and stripped of control characters, never interpreted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import NbagentError
from ..render.escape import strip_controls
from ..session.model import OPEN_CONTEXT_TAG

MAX_SELECTION = 4000
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class BadContext(NbagentError):
    """The client sent a context that is not of the documented shape."""


@dataclass(frozen=True)
class OpenContext:
    notebook: str | None = None
    """The notebook's path relative to the workspace (or the server root)."""
    cell_id: str | None = None
    selection: str | None = None
    own_cell: bool = False
    """True when the prompt was written in that cell itself (``%%agent``), not just selected there."""
    output: int | None = None
    """The cell's output (1 = its first) the user attached to the prompt; its content follows as
    ``[attachment 1: ...]`` (nbagent.engine.attachments)."""

    @classmethod
    def from_dict(cls, data: Any) -> "OpenContext | None":
        """The panel's ``{"notebook", "cell_id", "selection"}``; None when it holds nothing."""
        if data is None:
            return None
        if not isinstance(data, dict) or set(data) - {"notebook", "cell_id", "selection", "output"}:
            raise BadContext('context must be an object with "notebook", "cell_id", "selection" and "output" only')
        for key in ("notebook", "cell_id", "selection"):
            if data.get(key) is not None and not isinstance(data[key], str):
                raise BadContext(f"context.{key} must be a string")
        notebook = strip_controls(data.get("notebook") or "")[:500] or None
        cell_id = data.get("cell_id") or None
        if cell_id is not None and not _ID.match(cell_id):
            raise BadContext("context.cell_id is not a notebook cell id")
        selection = data.get("selection") or None
        if selection is not None and len(selection) > MAX_SELECTION:
            selection = selection[:MAX_SELECTION] + f"\n[… {len(selection) - MAX_SELECTION} more characters]"
        output = data.get("output")
        if output is not None and (not isinstance(output, int) or isinstance(output, bool) or not 0 < output <= 10_000
                                   or cell_id is None):
            raise BadContext("context.output must be a cell's output number (1 and up), with its cell_id")
        if not (notebook or cell_id or selection):
            return None
        return cls(notebook, cell_id, selection, output=output)

    def preface(self) -> str:
        lines = [OPEN_CONTEXT_TAG]
        if self.notebook:
            lines.append(f"active notebook: {self.notebook}")
        if self.cell_id:
            if self.own_cell:
                lines.append(f"this prompt was written in cell {self.cell_id} of that notebook: \"this cell\" is "
                             "it, \"the cell above/below\" are its neighbours (notebook_read shows them)")
            else:
                lines.append(f"active cell: {self.cell_id} (\"this cell\" means it; notebook_read shows it)")
            if self.output is not None:
                lines.append(f"attached: output {self.output} of that cell (\"this output\" means it; it follows "
                             "as attachment 1)")
        if self.selection:
            lines += ["selected text:", strip_controls(self.selection)]
        return "\n".join(lines + ["</open_in_jupyter>"])


OUTPUT_TYPES = frozenset({"display_data", "execute_result", "stream", "error"})
MAX_ATTACHED = 4
MAX_ATTACHED_CHARS = 8_000_000
"""A panel prompt's attached outputs, at most: a chart's base64 is 50-500 KB."""


def attached_outputs(data: Any) -> list[dict[str, Any]]:
    """The notebook outputs (nbformat dicts) a panel prompt attaches; [] for none. Checked for shape
    and size only: their content is shown to the model as any notebook output is (nbagent.tools.nbshrink)."""
    if data is None:
        return []
    if not isinstance(data, list) or len(data) > MAX_ATTACHED:
        raise BadContext(f"attach must be a list of at most {MAX_ATTACHED} notebook outputs")
    for output in data:
        if not isinstance(output, dict) or output.get("output_type") not in OUTPUT_TYPES:
            raise BadContext(f"an attached output must be an object whose output_type is one of {sorted(OUTPUT_TYPES)}")
    if sum(len(repr(o)) for o in data) > MAX_ATTACHED_CHARS:
        raise BadContext(f"the attached outputs are larger than {MAX_ATTACHED_CHARS:,} characters")
    return data


def without_context(prompt: str) -> str:
    """The prompt as the user typed it: the open-context block ``with_context`` added, left out."""
    return prompt.split(f"\n\n{OPEN_CONTEXT_TAG}", 1)[0]


def with_context(prompt: str, context: OpenContext | None) -> str:
    """The prompt as the model gets it: the open-context block after it (the prompt stays first, so a
    session's title and history show what the user typed)."""
    return prompt if context is None else f"{prompt}\n\n{context.preface()}"
