"""A tool call's row: the call with a one-line argument summary, its status and an expandable result.

The row shows one ``ToolItem`` of the state (agent_state.py); its status is the item's, from "input"
(the arguments are streaming) to done, failed, denied, killed or interrupted."""

from __future__ import annotations


import ipywidgets as widgets
from traitlets import Dict, Unicode, observe

from ...render.agent_state import KernelChange, ToolItem
from ...render.escape import escape_html
from ...render.text import kernel_line
from .format import diff_html, output_html, summarize_arguments

STATUS_STYLE = {
    "input": ("…", "#666"), "running": ("▸", "#9a6700"), "awaiting_approval": ("?", "#9a6700"),
    "done": ("✓", "#1a7f37"), "failed": ("✗", "#cf222e"), "denied": ("⊘", "#cf222e"),
    "killed": ("■", "#cf222e"), "interrupted": ("■", "#9a6700"),
}
STATUS_LABEL = {"input": "preparing", "awaiting_approval": "waiting"}
"""The words shown for the state's statuses where its own name reads badly."""


class ToolRow(widgets.VBox):
    call_id = Unicode("")
    name = Unicode("")
    arguments = Dict()
    status = Unicode("input")
    """The state's status of the call (agent_state.ItemStatus)."""
    output = Unicode("")
    diff = Unicode("")
    kernel = Unicode("")
    """The call's change to the kernel's namespace in one line (render.text.kernel_line), or ""."""

    def __init__(self, **kwargs):
        self.line = widgets.HTML()
        self.kernel_view = widgets.HTML(layout=widgets.Layout(display="none"))
        # A <details> element expands in the browser with no round trip to the kernel.
        self.result = widgets.HTML(layout=widgets.Layout(display="none"))
        super().__init__(children=(self.line, self.kernel_view, self.result), **kwargs)
        self.add_class("nbagent-tool-row")
        self._render_line()

    def show(self, item: ToolItem) -> None:
        self.call_id, self.name, self.status = item.call_id, item.name, item.status
        self.arguments = dict(item.arguments or {})
        self.output, self.diff = item.output or "", item.diff or ""
        self.kernel = _kernel_text(item.kernel) if item.kernel is not None else ""

    @property
    def summary(self) -> str:
        return summarize_arguments(self.name, self.arguments)

    @observe("name", "arguments", "status", "output")
    def _render_line(self, change=None) -> None:
        mark, colour = STATUS_STYLE.get(self.status, ("?", "#666"))
        label = STATUS_LABEL.get(self.status, self.status)
        why = failure_reason(self.status, self.output)
        self.line.value = (f'<span style="color:{colour}">{mark} {escape_html(label)}</span> '
                           f"<b>{escape_html(self.name)}</b> "
                           f"<code>{escape_html(self.summary)}</code>"
                           + (f' <span class="nbagent-tool-reason" style="color:{colour}">: {escape_html(why)}</span>'
                              if why else ""))

    @observe("kernel")
    def _render_kernel(self, change=None) -> None:
        self.kernel_view.value = (f'<div class="nbagent-kernel-change" style="margin-left:1.2em;font-size:12px;'
                                  f'color:#555">{escape_html(self.kernel)}</div>') if self.kernel else ""
        self.kernel_view.layout.display = "" if self.kernel else "none"

    @observe("output", "diff")
    def _render_result(self, change=None) -> None:
        parts = []
        if self.diff and self.diff.strip() not in self.output:  # edit tools often return the diff too
            parts.append(diff_html(self.diff))
        if self.output:
            parts.append(output_html(self.output))
        title = "diff and result" if self.diff else "result"
        self.result.value = (f'<details style="margin-left:1.2em;font-size:12px"><summary>{title}</summary>'
                             f'{"".join(parts)}</details>') if parts else ""
        self.result.layout.display = "" if parts else "none"


REASON_CHARS = 160
UNSUCCESSFUL = ("failed", "denied", "killed", "interrupted")


def failure_reason(status: str, output: str) -> str:
    """Why a call did not succeed, on its row's own line: the first line of its result, cut (the whole
    result is one click away, under the row)."""
    if status not in UNSUCCESSFUL:
        return ""
    first = next((line.strip() for line in (output or "").splitlines() if line.strip()), "")
    return first if len(first) <= REASON_CHARS else first[: REASON_CHARS - 1] + "…"


def _kernel_text(change: KernelChange) -> str:
    line = kernel_line(list(change.added), list(change.rebound), list(change.deleted), list(change.mutated),
                       list(change.unchecked))
    if change.dropped:
        line += "; released by the undo memory cap: " + ", ".join(change.dropped)
    return line
