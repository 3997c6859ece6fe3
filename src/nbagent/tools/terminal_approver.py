"""TerminalApprover: asks y/n/always on a terminal for an approval request whose card is already shown.

Shared by the CLI, the kernel's text view and ``nbagent mcp serve``; the card itself is
nbagent.render.terminal.approval_card.
"""

from __future__ import annotations

import sys
from typing import Callable, TextIO

from .. import events as ev
from ..render.escape import escape_controls
from .approvals import Unasked

_ANSWERS = {"y": "approve", "yes": "approve", "n": "deny", "no": "deny", "": "deny",
            "a": "always", "always": "always"}


class TerminalApprover:
    """Asks "approve? [y]es / [n]o / [a]lways" for a request whose card is already on screen.

    ``ask(question) -> answer`` reads one answer (``input`` in a kernel or terminal IPython); with no
    ``ask`` (no terminal to ask on) or when asking fails (no stdin: nbconvert), the call is denied and
    ``unattended`` says how to run such calls unattended.
    """

    def __init__(self, ask: Callable[[str], str] | None, *, out: TextIO | None = None,
                 unattended: str = "use approval mode auto"):
        self.ask = ask
        self.out = out
        self.unattended = unattended

    def __call__(self, request: ev.ApprovalRequest) -> str:
        name = escape_controls(request.name, keep_newlines=False)
        if self.ask is None:
            return self._unasked(f"[denied {name}: no one could be asked (no terminal); {self.unattended}]")
        question = f"approve {name}? [y]es / [n]o / [a]lways: "
        for _ in range(3):
            try:
                answer = self.ask(question)
            except (EOFError, OSError, RuntimeError):  # RuntimeError: IPython's StdinNotImplementedError
                return self._unasked(f"  (denied: no one could be asked here; {self.unattended})")
            decision = _ANSWERS.get(answer.strip().lower())
            if decision is not None:
                return decision
            question = "please answer y, n or a: "
        return self._deny("  (no clear answer: denied)")

    def _deny(self, message: str) -> str:
        print(message, file=self.out or sys.stderr, flush=True)
        return "deny"

    def _unasked(self, message: str) -> str:
        """Deny saying why: nobody could be asked (the model and the user hear so, not "denied by the user")."""
        print(message, file=self.out or sys.stderr, flush=True)
        return Unasked(f"to allow such calls: {self.unattended}")


def ask_on_stderr(question: str) -> str:
    """Ask on the terminal with the question on stderr (stdout carries only the answer's text)."""
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError("no answer")
    return line
