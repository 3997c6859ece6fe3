"""Commands the workspace's stored state names, approved by the user with a card before they ever run.

A workspace's database can hold attached-context command sources and its ``.nbagent/mcp.json`` MCP
servers to start, and both can come with a ``git clone``. Neither runs until the user on this machine
approved that exact command for this workspace (nbagent.workspace.trust). At the start of a turn,
before the model is called, each one this session would run and the record does not hold is asked
about once per agent: the normal approval_request (its name ``context_command`` or ``mcp_server``, the
whole command in its arguments), answered with Approve / Deny / Always in the widget, the panel or the
terminal, or by ``agent.decide``. Approve (or Always) records the approval and the command runs;
Deny leaves it stored and unrun ("needs approval") for the rest of this agent's life. In
"read-only" mode nothing is asked and nothing runs (an ``mcp`` error names a server that did not start). Each card ends with a ``tool_result`` like any call,
so front ends settle it the same way; the model is never told.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from .. import events as ev
from ..attached.records import Source
from ..ids import new_id
from ..tools.approvals import Unasked
from ..workspace.trust import trust

CONTEXT_CARD = "context_command"
MCP_CARD = "mcp_server"


class StoredCommands:
    def __init__(self, runtime: Any):
        self.runtime = runtime
        """The AgentRuntime (not imported, not even for types: it imports this module)."""
        self.asked: set[tuple[str, str]] = set()
        """(card, command) already asked about by this agent: a denied one is not asked again."""

    async def confirm(self, turn_id: str) -> None:
        """Ask about every stored command this session would run that the trust record does not hold."""
        if self.runtime.config.approval == "read-only":
            self._tell_unstarted(turn_id)
            return
        for source in self.runtime.context.store.sources(self.runtime.session.id):
            if source.kind == "command" and not source.trusted and not source.muted:
                await self._ask_context(source, turn_id)
        for name in self.runtime.mcp.awaiting_approval():
            await self._ask_mcp(name, turn_id)

    def _tell_unstarted(self, turn_id: str) -> None:
        """Read-only mode asks nothing: say once why a server whose tool set is on did not start."""
        for name in self.runtime.mcp.awaiting_approval():
            if (MCP_CARD, name) not in self.asked:
                self.asked.add((MCP_CARD, name))
                self.runtime.emit(ev.Error(
                    message=f"MCP server {name!r} comes from the workspace's .nbagent/mcp.json and was not approved "
                            "for this workspace: not started (read-only mode asks nothing)", kind="mcp",
                    turn_id=turn_id))

    async def _ask_context(self, source: Source, turn_id: str) -> None:
        where = f"the {'session' if source.scope else 'workspace'}'s attached context (.nbagent/nbagent.db)"
        every = max(source.every or 0, self.runtime.config.context_min_every)
        arguments = {"command": source.spec, "source": source.name, "stored_in": where,
                     "runs": f"in the workspace, every {every:g} s at most, until removed"}
        # approve() records the trust and fetches the first text, so the next turn has it
        await self._ask(CONTEXT_CARD, source.spec, f"context source {source.name}", turn_id, arguments,
                        lambda: self.runtime.context.approve(source.name))

    async def _ask_mcp(self, name: str, turn_id: str) -> None:
        cfg = self.runtime.mcp.servers[name]
        launch: dict[str, Any] = ({"command": cfg.command, "args": list(cfg.args), "env": dict(cfg.env),
                                   "cwd": cfg.cwd} if cfg.command else {"url": cfg.url, "headers": dict(cfg.headers)})
        root, key = self.runtime.workspace.root, cfg.launch_key()
        approved = await self._ask(MCP_CARD, key, f"MCP server {name}", turn_id,
                                   {"server": name, **launch, "stored_in": "the workspace's .nbagent/mcp.json"},
                                   lambda: trust(root, key, what=f"MCP server {name}"))
        if approved:  # started and listed now, so this turn's first request already has its tools
            await self.runtime.start_mcp(turn_id)

    async def _ask(self, card: str, command: str, what: str, turn_id: str, arguments: dict[str, Any],
                   on_approve: Callable[[], Any]) -> bool:
        """One card; True when it was approved now."""
        if (card, command) in self.asked:
            return False
        self.asked.add((card, command))
        call_id = f"stored_{new_id()}"
        decision = await self.runtime.approvals.confirm(card, call_id, turn_id, arguments)
        approved = decision != "deny"
        if approved:
            await asyncio.to_thread(on_approve)
            output = f"approved: {what} is recorded as trusted for this workspace and runs"
        elif card == CONTEXT_CARD:
            output = (f"denied: {what} stays stored and does not run (approve it later with "
                      "agent.context.approve, /context approve or nbagent context approve)")
        else:
            output = f"denied: {what} is not started"
        if isinstance(decision, Unasked):  # a script with no approver: said at once, never waited for
            output += f" ({decision.why})"
        self.runtime.emit(ev.ToolResult(name=card, call_id=call_id, output=output, is_error=not approved,
                                        status="done" if approved else "denied", turn_id=turn_id))
        return approved
