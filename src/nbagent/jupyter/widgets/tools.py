"""Tool calls: the tool in flight and one row per call with its status and result.

The tool in flight is named at tool_input_start and cleared on its result; each row shows the
call with a one-line argument summary, a status and an expandable result (diffs in colour)."""

from __future__ import annotations

import html
from typing import Any, Callable

import ipywidgets as widgets
from traitlets import Dict, Unicode, observe

from .format import diff_html, output_html, summarize_arguments

STATUS_STYLE = {
    "running": ("▸", "#9a6700"), "waiting": ("?", "#9a6700"), "done": ("✓", "#1a7f37"),
    "failed": ("✗", "#cf222e"), "denied": ("⊘", "#cf222e"), "killed": ("■", "#cf222e"),
    "interrupted": ("■", "#9a6700"),
}


class ToolRow(widgets.VBox):
    """One call. ``status``: running, waiting (for approval), done, failed, denied, killed or interrupted."""

    call_id = Unicode("")
    name = Unicode("")
    arguments = Dict()
    status = Unicode("running")
    output = Unicode("")
    diff = Unicode("")

    def __init__(self, **kwargs):
        self.line = widgets.HTML()
        # A <details> element expands in the browser with no round trip to the kernel.
        self.result = widgets.HTML(layout=widgets.Layout(display="none"))
        super().__init__(children=(self.line, self.result), **kwargs)
        self.add_class("nbagent-tool-row")
        self._render_line()

    @property
    def summary(self) -> str:
        return summarize_arguments(self.name, self.arguments)

    @observe("name", "arguments", "status")
    def _render_line(self, change=None) -> None:
        mark, colour = STATUS_STYLE.get(self.status, ("?", "#666"))
        self.line.value = (f'<span style="color:{colour}">{mark} {self.status}</span> '
                           f"<b>{html.escape(self.name)}</b> "
                           f"<code>{html.escape(self.summary)}</code>")

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


class ToolCalls(widgets.VBox):
    """The tool in flight (this widget) and the rows of the calls, each put where ``place`` puts it.

    A turn's view places each row in its timeline, between the paragraphs it came between; by
    default the rows go in a box below the tool in flight.
    """

    def __init__(self, place: Callable[[ToolRow], None] | None = None, **kwargs):
        self.in_flight = widgets.HTML()
        self.rows_box = widgets.VBox()
        super().__init__(children=(self.in_flight,) if place else (self.in_flight, self.rows_box), **kwargs)
        self._place = place or (lambda row: setattr(self.rows_box, "children", (*self.rows_box.children, row)))
        self.add_class("nbagent-tools")
        self.rows: dict[str, ToolRow] = {}
        self._flying: dict[str, str] = {}

    @property
    def flying(self) -> list[str]:
        """Names of the tools started and not finished yet."""
        return list(self._flying.values())

    def started(self, call_id: str, name: str) -> None:
        self._flying[call_id or name] = name
        self._render_in_flight()

    def called(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        row = self.rows.get(call_id)
        if row is None:
            row = self.rows[call_id] = ToolRow(call_id=call_id, name=name)
            self._place(row)
        row.arguments = dict(arguments)
        self._flying.setdefault(call_id, name)
        self._render_in_flight()

    def waiting(self, call_id: str, diff: str | None) -> None:
        row = self.rows.get(call_id)
        if row is not None:
            row.status = "waiting"
            row.diff = diff or ""

    def approved(self, call_id: str) -> None:
        row = self.rows.get(call_id)
        if row is not None and row.status == "waiting":
            row.status = "running"

    def finished(self, call_id: str, name: str, status: str, output: str) -> None:
        if call_id not in self.rows:
            self.called(call_id, name, {})
        row = self.rows[call_id]
        row.status, row.output = status, output
        self._flying.pop(call_id, None)
        self._render_in_flight()

    def turn_ended(self) -> None:
        self._flying.clear()
        self._render_in_flight()
        for row in self.rows.values():
            if row.status in ("running", "waiting"):
                row.status = "killed"

    def _render_in_flight(self) -> None:
        names = self.flying
        self.in_flight.value = ("" if not names else
                                f'<i>running {html.escape(", ".join(names))}…</i>')
