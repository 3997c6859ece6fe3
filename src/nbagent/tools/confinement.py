"""Which sandbox policy a tool's process runs under: the workspace, the mode, the user's allowances.

The tools that start code nbagent can confine (``bash``, ``task_create``, ``notebook_check``; a batch
task's agent and an eval's check run through the same) ask here for the confinement of their process.
The sandbox holds in every approval mode where a mechanism works; approvals are the second line. A call
that the user approved to run outside it (``outside_sandbox``, asked about with its reason) is the only
way out. In read-only mode the workspace is mounted read-only as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..workspace import sandbox as sb
from ..workspace.state_dir import location

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


def confinement(ctx: Any, writable: tuple[Path, ...] = (), outside: bool = False) -> Confinement | None:
    """The sandbox and policy for a tool call's process; None when it runs unconfined (no mechanism
    here, or the user approved this call to leave the sandbox)."""
    box = sb.current()
    if outside or not box.active:
        return None
    return box, policy_for(ctx.workspace.root, ctx.config, writable)


def confinement_at(root: Path, config: Any = None, writable: tuple[Path, ...] = (),
                   readable: tuple[Path, ...] = ()) -> Confinement | None:
    """The same for a process that is no tool call (an eval's check, ``nbagent check``)."""
    box = sb.current()
    return (box, policy_for(root, config, writable, readable)) if box.active else None

