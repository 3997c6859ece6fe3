"""The approval card: the tool, its arguments or the diff, and Approve / Deny / Always.

The turn waits until a button is clicked (or the decision comes from elsewhere: the side panel, code)."""

from __future__ import annotations

import json
from typing import Any, Callable

import ipywidgets as widgets
from traitlets import Unicode

from ...render.escape import escape_html
from .format import diff_html

Decide = Callable[[str, str], None]


class ApprovalCard(widgets.VBox):
    call_id = Unicode("")
    name = Unicode("")
    decision = Unicode("")
    """"" while the turn waits; then approve, deny or always."""

    def __init__(self, *, call_id: str, name: str, arguments: dict[str, Any], diff: str | None,
                 decide: Decide, **kwargs):
        self.title = widgets.HTML(f"<b>Approve {escape_html(name)}?</b>")
        self.body = widgets.HTML(diff_html(diff) if diff else _arguments_html(arguments))
        self.approve_button = widgets.Button(description="Approve", button_style="success", icon="check")
        self.deny_button = widgets.Button(description="Deny", button_style="danger", icon="times")
        self.always_button = widgets.Button(description="Always", tooltip=f"approve {name} for this session",
                                            icon="check-double")
        self.buttons = widgets.HBox((self.approve_button, self.deny_button, self.always_button))
        self.arguments, self.diff = dict(arguments), diff
        super().__init__(children=(self.title, self.body, self.buttons), call_id=call_id, name=name,
                         layout=widgets.Layout(border="1px solid #d4a72c", padding="4px", margin="4px 0"),
                         **kwargs)
        self.add_class("nbagent-approval")
        self._decide = decide
        for button, choice in ((self.approve_button, "approve"), (self.deny_button, "deny"),
                               (self.always_button, "always")):
            button.on_click(lambda _b, choice=choice: self.choose(choice))

    def choose(self, decision: str) -> None:
        """What a click does: pass the decision on at once (the turn is waiting), then settle the card."""
        if self.decision:
            return
        self._decide(self.call_id, decision)
        self.settle(decision)

    def settle(self, decision: str, by: str = "user") -> None:
        self.decision = decision
        for button in self.buttons.children:
            button.disabled = True
        verb = {"approve": "approved", "always": "approved (always)", "deny": "denied"}.get(decision, decision)
        suffix = "" if by in ("user", "") else f" ({by})"
        self.title.value = f"{escape_html(self.name)}: <b>{verb}</b>{escape_html(suffix)}"


def _arguments_html(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    return ('<pre style="margin:0;max-height:20em;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;'
            f'font-size:12px">{escape_html(text)}</pre>')
