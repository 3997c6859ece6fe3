"""Approvals: whether a tool call may run, decided by the tool's policy and the approval mode of the moment.

Each tool has one policy (``Tool.approval``), which the configuration can override per tool name
(``AgentConfig.tool_approvals``):
- ``never``: runs in every mode without asking (reading, the task list);
- ``ask``: asks in "ask" mode, runs in "auto" mode, is denied in "read-only" mode;
- ``always_ask``: asks in "ask" and "auto" mode (code in the user's live kernel), denied in "read-only".
A tool that starts code (``Tool.runs``) is never read-only, whatever it declares: "read-only" mode
denies it (a notebook check alone runs, in the sandbox with the workspace mounted read-only). The
"sandboxed" mode (the default where the sandbox works, like Codex's workspace-write) runs without asking
what the sandbox holds (commands, tasks, checks) and the changes of the file tools (checkpointed, undone
with undo); code in a kernel nbagent does not confine, an MCP server's tools and a call that asks to
leave the sandbox (``outside_sandbox``, with its reason) ask as in "ask" mode.
The mode is read when the decision is made, not when the turn started: a change made while a turn runs
or a prompt waits applies to the very next decision. "always" given to a request approves the same tool
for the rest of the session, except in "read-only" mode, which denies it all the same.

The modes, policies and decisions are the ``Literal`` vocabularies of nbagent.events (``ApprovalMode``,
``ApprovalPolicy``, ``Decision``), also generated for the panel's TypeScript. ``PendingApprovals`` is the
one place a request waits for its answer: the agent's (from the kernel's widgets, the terminal, the
server's panel) and an outside MCP agent's call that the panel answers (nbagent.jupyter.server.mcp_approvals).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, get_args

from .. import events as ev
from ..config import APPROVAL_MODES, POLICIES
from ..errors import ToolError
from ..workspace import sandbox as sb

Policy = ev.ApprovalPolicy
DECISIONS: tuple[ev.Decision, ...] = get_args(ev.Decision)
__all__ = ["APPROVAL_MODES", "DECISIONS", "POLICIES", "Approvals", "Denied", "PendingApprovals", "Unasked",
           "check_decision", "check_policy", "default_mode", "mode_line"]

NO_ONE_LISTENS = ("to allow such calls give the Agent an approver (Agent(approver=...)), subscribe and answer "
                  "with agent.decide, or choose an approval mode that runs them (auto, sandboxed)")

READ_ONLY_CHECKS = frozenset({"notebook_check"})
"""Tools that run code yet change nothing when the workspace is mounted read-only: read-only mode runs
them in the sandbox (and denies them where there is none)."""

DENIED_BY_THE_USER = "denied by the user: do not retry this call; ask or try another way"


class Denied(str):
    """A "deny" (equal to it, so it passes wherever a decision does) that carries why, in the words the
    tool result gives the model: the user said no, read-only mode, or no one could be asked."""

    why: str = DENIED_BY_THE_USER

    def __new__(cls, why: str) -> "Denied":
        denied = super().__new__(cls, "deny")
        denied.why = why
        return denied


class Unasked(Denied):
    """What an approver answers when no one could be asked (no terminal, no stdin): the call is denied,
    and the model and the user are told that and how to allow such calls (``how_to_allow``)."""

    def __new__(cls, how_to_allow: str) -> "Unasked":
        return super().__new__(cls, f"denied because no one could be asked to approve it; {how_to_allow}. "
                                    "Do not retry this call")  # type: ignore[return-value]


def default_mode() -> str:
    """The approval mode of an agent given none: "sandboxed" where the sandbox works, else "ask"
    (``NBAGENT_APPROVAL`` still wins: the configuration reads it)."""
    return "sandboxed" if sb.current().active else "ask"


def mode_line(mode: str) -> str:
    """The mode and whether the sandbox is active, in one line for every front end."""
    box = sb.current()
    where = f"sandbox {box.mechanism}" if box.active else "sandbox none: commands are NOT confined"
    if mode == "sandboxed" and not box.active:
        return f"approval sandboxed (acting as ask: no sandbox here) · {where}"
    return f"approval {mode} · {where}"


def check_decision(decision: Any) -> ev.Decision:
    """The decision if it is one of approve, deny, always; ValueError otherwise (the one check of it)."""
    if decision not in DECISIONS:
        raise ValueError(f"decision must be approve, deny or always, not {decision!r}")
    return decision


def _as_decision(answer: Any) -> ev.Decision:
    """An approver's answer as a decision: anything but approve, deny or always denies."""
    for decision in DECISIONS:
        if decision == answer:
            return decision
    return "deny"


def check_policy(policy: Any) -> ev.ApprovalPolicy:
    if policy not in POLICIES:
        raise ValueError(f"an approval policy is one of {', '.join(POLICIES)}, not {policy!r}")
    return policy


class PendingApprovals:
    """The approval requests that wait for an answer, by call id: a front end's answer reaches the call
    through ``resolve`` (on the loop the call waits on)."""

    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future[str]] = {}

    async def answer(self, call_id: str, announce: Callable[[], None] = lambda: None,
                     timeout: float | None = None) -> str:
        """Wait for ``resolve(call_id, ...)`` and return its decision. ``announce`` runs once the call is
        waiting (it emits the request: an answer given at once still finds the call); TimeoutError after
        ``timeout`` seconds. The call stops waiting however it ends (answered, timed out, cancelled)."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._futures[call_id] = future
        try:
            announce()
            return await asyncio.wait_for(future, timeout)
        finally:
            if self._futures.get(call_id) is future:
                del self._futures[call_id]

    def resolve(self, call_id: str, decision: str) -> bool:
        """Answer the waiting call ``call_id``; False when none waits (answered already, or unknown)."""
        future = self._futures.get(call_id)
        if future is None or future.done():
            return False
        future.set_result(decision)
        return True

    @property
    def call_ids(self) -> list[str]:
        return list(self._futures)


class Approvals:
    """Decides on each call; in "ask" mode it emits an approval_request and waits for ``resolve``
    (from a front end) or for the ``approver`` callable when one was given."""

    def __init__(self, config: Callable[[], Any], emit: Callable[[ev.AnyEvent], None], approver=None,
                 listened: Callable[[], bool] | None = None):
        self.config = config
        """Returns the agent's configuration now (mode and per-tool policies are read from it)."""
        self.emit = emit
        self.approver = approver
        self.listened = listened
        """Whether anyone follows the events and so could answer a request (``Agent.decide``); with no
        approver and no one listening, a request is denied at once, saying how to allow it."""
        self.always: set[str] = set()
        self.waiting = PendingApprovals()

    def policy_of(self, tool) -> ev.ApprovalPolicy:
        overrides = getattr(self.config(), "tool_approvals", None) or {}
        return overrides.get(tool.name) or tool.approval

    async def decide(self, tool, ctx, arguments: dict[str, Any]) -> str:
        policy = self.policy_of(tool)
        runs = getattr(tool, "runs", "")
        leaving = bool(runs == "sandbox" and arguments.get("outside_sandbox"))
        mode = self.config().approval
        if mode == "read-only":
            if policy == "never" and not runs:
                return "approve"
            if tool.name in READ_ONLY_CHECKS and not leaving and sb.current().active:
                return "approve"  # it runs in the sandbox with the workspace mounted read-only
            return self._record(tool, ctx, Denied("denied: the approval mode is read-only, which allows no "
                                                  "changes and runs no code: do not retry this call; ask or "
                                                  "try another way"), "read-only mode")
        if policy == "never" and not leaving:
            return "approve"
        if tool.name in self.always and not leaving:
            return self._record(tool, ctx, "approve", "always")
        if mode == "sandboxed" and not leaving and policy != "always_ask":
            if runs == "sandbox" and sb.current().active:
                return "approve"  # confined: it can change the workspace only
            if not runs:
                return "approve"  # a file change: checkpointed, taken back with undo
        if mode == "auto" and policy == "ask" and not leaving:
            return "approve"
        return await self._ask(tool, ctx, arguments)

    async def _ask(self, tool, ctx, arguments: dict[str, Any]) -> str:
        diff = None
        if tool.preview is not None:
            try:
                diff = await asyncio.to_thread(tool.preview, ctx, **arguments)
            except ToolError:
                raise  # the edit cannot apply (no match...): tell the model now, ask nobody
        request = ev.ApprovalRequest(name=tool.name, call_id=ctx.call_id, arguments=arguments, diff=diff,
                                     annotations=getattr(tool, "annotations", None), turn_id=ctx.turn_id)
        if self.approver is None and self.listened is not None and not self.listened():
            self.emit(request)  # no one could answer it: a script's agent.run() would wait forever
            return self._record(tool, ctx, Unasked(NO_ONE_LISTENS), "no one to ask")
        if self.approver is not None:
            self.emit(request)
            decision = await _call_approver(self.approver, request)
        else:
            decision = await self.waiting.answer(ctx.call_id, lambda: self.emit(request))
        if isinstance(decision, Unasked):
            return self._record(tool, ctx, decision, "no one to ask")
        answer = _as_decision(decision)
        if answer == "always":
            self.always.add(tool.name)
        return self._record(tool, ctx, "deny" if answer == "deny" else "approve", "user", answer)

    def _record(self, tool, ctx, outcome: str, by: ev.DecidedBy, decision: ev.Decision | None = None) -> str:
        """Emit the decision; return the outcome (a Denied carries why for the tool result)."""
        decision = decision or ("deny" if outcome == "deny" else "approve")
        self.emit(ev.ApprovalDecision(name=tool.name, call_id=ctx.call_id, decision=decision, by=by,
                                      turn_id=ctx.turn_id))
        return outcome

    def resolve(self, call_id: str, decision: str) -> bool:
        """Answer a pending request (called on the agent's loop). False if none is pending."""
        return self.waiting.resolve(call_id, decision)

    @property
    def pending(self) -> list[str]:
        return self.waiting.call_ids

    async def confirm(self, name: str, call_id: str, turn_id: str, arguments: dict[str, Any]) -> str:
        """Ask the user about something that is not a model's tool call (a command the workspace's stored
        state names): the same approval_request and approval_decision, so the same card in every front
        end and the same ``decide``. "approve", or a "deny" (an ``Unasked`` says no one could be asked
        and how to allow it). The caller decides whether the mode lets it ask."""
        return await self._ask(_Asked(name), _Call(call_id, turn_id), arguments)


@dataclass(frozen=True)
class _Asked:
    """What ``confirm`` asks about, in the place of a tool: a name, no preview, no hints."""

    name: str
    preview: None = None
    annotations: None = None


@dataclass(frozen=True)
class _Call:
    call_id: str
    turn_id: str


async def _call_approver(approver, request: ev.ApprovalRequest) -> str:
    if asyncio.iscoroutinefunction(approver):
        return await approver(request)
    return await asyncio.to_thread(approver, request)
