"""Approval of outside agents' calls at ``/nbagent/mcp`` in the JupyterLab panel's approval card.

A call that needs the user's approval (a write in "ask" mode, kernel_run) becomes the same
``approval_request`` event the panel shows for its own agent, sent to every open panel session
through the hub; the user's Approve, Always or Deny comes back as the same "approval" message,
which the hub offers here first (``resolve``). The card goes away on every tab through the
``approval_decision`` event that follows. With no panel connected (a headless server) the call is
denied at once, with the hint of how to allow such calls; with no answer within the timeout, it is
denied too (an outside agent that went away leaves its card until then: tornado does not notice a
closed connection while the handler waits, and the SDK's JSON-mode transport does not cancel the call);
a call cancelled on this side (the server stopping) takes its card away. The call waits in the same
``PendingApprovals`` as the agent's own requests (nbagent.tools.approvals).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...events import ApprovalDecision, ApprovalRequest, Event
from ...tools.approvals import PendingApprovals

HEADLESS = ("no JupyterLab panel is open to ask for MCP writes: open the nbagent panel to approve them "
            "there, or set c.NbAgentServer.mcp_approval = \"auto\" to let outside agents change notebooks")


class PanelApprover:
    """The approver of the route's served tools; ``on_event`` is their event sink."""

    def __init__(self, hub: Any, timeout: float):
        self.hub = hub
        self.timeout = timeout
        self.waiting = PendingApprovals()
        self._why: dict[str, str] = {}

    def on_event(self, event: Event) -> None:
        """Approval requests and decisions go to the panels; the tools' other events stay here."""
        if isinstance(event, (ApprovalRequest, ApprovalDecision)):
            self.hub.broadcast(event)

    async def ask(self, request: ApprovalRequest) -> str:
        if not self.hub.watched:
            self._why[request.call_id] = HEADLESS
            return "deny"
        try:
            return await self.waiting.answer(request.call_id, timeout=self.timeout)
        except asyncio.TimeoutError:
            self._why[request.call_id] = f"no answer in the JupyterLab panel within {self.timeout:g} s"
            return "deny"
        except asyncio.CancelledError:  # the outside agent gave up (cancelled, disconnected): take the card away
            self.hub.broadcast(ApprovalDecision(name=request.name, call_id=request.call_id, decision="deny",
                                                by="cancelled"))
            raise

    def resolve(self, call_id: str, decision: str) -> bool:
        """The panel's answer; False when ``call_id`` is not an outside agent's pending request."""
        return self.waiting.resolve(call_id, decision)

    def deny_note(self, call_id: str) -> str:
        """Why a call was denied, beyond the user's own Deny (said to the outside agent)."""
        return self._why.pop(call_id, "")
