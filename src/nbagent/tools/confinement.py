"""Which sandbox policy a tool's process runs under: the workspace, the mode, the user's allowances.

The tools that start code nbagent can confine (``bash``, ``task_create``, ``notebook_check``; a batch
task's agent and an eval's check run through the same) ask here for the confinement of their process.
The sandbox holds in every approval mode where a mechanism works; approvals are the second line. A call
that the user approved to run outside it (``outside_sandbox``, asked about with its reason) is the only
way out. In read-only mode the workspace is mounted read-only as well.

The network: none, unless the user allowed hosts (``sandbox_hosts``: their own configuration, an
argument or ``NBAGENT_SANDBOX_HOSTS``; nbagent reads no configuration from a workspace) or all of it
(``sandbox_network``). With hosts, each process gets a gate of the proxy (nbagent.workspace.
net_proxy); a host not on the list is refused and reported in the result, and a tool call of an agent
that can ask asks first (a ``sandbox_network`` card with the command and the host), "always" adding
the host for the rest of the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path
from typing import Any

from .. import events as ev
from ..workspace import sandbox as sb
from ..workspace.net_proxy import Ask, Gate, proxy
from ..workspace.state_dir import location

NETWORK_CARD = "sandbox_network"
"""The approval card's name for a host not on the allow-list (its call id starts with ``net_``)."""
GRANTED = "sandbox_hosts_granted"
"""``ctx.extras[GRANTED]``: the hosts approved with "always" in this session."""

Confinement = tuple[sb.Sandbox, sb.Policy]


def policy_for(workspace_root: Path, config: Any, writable: tuple[Path, ...] = (),
               readable: tuple[Path, ...] = ()) -> sb.Policy:
    """The policy for a process working in ``workspace_root`` under ``config`` (an AgentConfig);
    ``readable``: folders it must read wherever they are."""
    root = Path(workspace_root).resolve()
    state = location(root)
    readonly = (*readable, state) if root in state.parents else tuple(readable)
    return sb.Policy(root, writable_workspace=getattr(config, "approval", "ask") != "read-only",
                     writable=tuple(writable), readonly=readonly,
                     network=bool(getattr(config, "sandbox_network", False)),
                     pass_env=tuple(getattr(config, "sandbox_env", ()) or ()))


def confinement(ctx: Any, writable: tuple[Path, ...] = (), outside: bool = False,
                command: str = "") -> Confinement | None:
    """The sandbox and policy for a tool call's process; None when it runs unconfined (no mechanism
    here, or the user approved this call to leave the sandbox). ``command``: what runs, for the card
    that asks about a host."""
    box = sb.current()
    if outside or not box.active:
        return None
    policy = policy_for(ctx.workspace.root, ctx.config, writable)
    granted = tuple(ctx.extras.get(GRANTED, ()))
    return box, with_gate(box, policy, (*_hosts(ctx.config), *granted), _asker(ctx, command), command)


def confinement_at(root: Path, config: Any = None, writable: tuple[Path, ...] = (),
                   readable: tuple[Path, ...] = ()) -> Confinement | None:
    """The same for a process that is no tool call (an eval's check, ``nbagent check``): no one to
    ask, so a host not on the list is refused."""
    box = sb.current()
    if not box.active:
        return None
    return box, with_gate(box, policy_for(root, config, writable, readable), _hosts(config))


def with_gate(box: sb.Sandbox, policy: sb.Policy, hosts: tuple[str, ...], ask: Ask | None = None,
              command: str = "") -> sb.Policy:
    """``policy`` with a gate of the proxy when hosts are allowed (and the network is not all open)."""
    if policy.network or not hosts:
        return policy
    gate = proxy().open(Gate(hosts, ask, command), unix=box.mechanism == "bubblewrap")
    return dataclasses.replace(policy, gate=gate)


def blocked_hosts_note(confine: Confinement | None) -> str:
    """What a result adds for the hosts the gate refused, or ""."""
    gate = confine[1].gate if confine is not None else None
    return gate.blocked_note() if gate is not None else ""


def _hosts(config: Any) -> tuple[str, ...]:
    return tuple(h for h in (getattr(config, "sandbox_hosts", ()) or ()) if h.strip())


def _asker(ctx: Any, command: str) -> Ask | None:
    """Asks the user about a host, on the agent's loop, when the agent can ask (its approvals are
    given to the tools, the mode is not read-only, the call runs on a loop)."""
    approvals = ctx.extras.get("approvals")
    if approvals is None or getattr(ctx.config, "approval", "ask") == "read-only":
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None

    async def ask(host: str, port: int) -> bool:
        asked = asyncio.run_coroutine_threadsafe(_ask_host(ctx, approvals, host, port, command), loop)
        return await asyncio.wrap_future(asked)

    return ask


async def _ask_host(ctx: Any, approvals: Any, host: str, port: int, command: str) -> bool:
    call_id = f"net_{uuid.uuid4().hex[:12]}"
    where = f"{host}:{port}"
    arguments = {"host": where, "command": command,
                 "reason": f"the sandboxed command asks to reach {where}, which is not on your host allow-list "
                           "(sandbox_hosts)"}
    try:
        decision = await approvals.confirm(NETWORK_CARD, call_id, ctx.turn_id, arguments)
    except asyncio.CancelledError:  # the command ended or was stopped while the card waited: close the card
        ctx.emit(ev.ToolResult(name=NETWORK_CARD, call_id=call_id, output=f"not answered: the command ended; "
                               f"{where} stayed blocked", is_error=True, status="interrupted", turn_id=ctx.turn_id))
        raise
    approved = decision != "deny"
    if approved and NETWORK_CARD in approvals.always:  # "always": this host, for the session
        approvals.always.discard(NETWORK_CARD)
        ctx.extras.setdefault(GRANTED, set()).add(where)
    why = getattr(decision, "why", "") if not approved else ""
    output = (f"approved: {where} is reachable for this command" if approved
              else f"denied: {where} stays blocked" + (f" ({why})" if why else ""))
    ctx.emit(ev.ToolResult(name=NETWORK_CARD, call_id=call_id, output=output, is_error=not approved,
                           status="done" if approved else "denied", turn_id=ctx.turn_id))
    return approved

