"""The MCP servers of one agent: which are on, their tool sets in the registry, calls, Stop, closing.

How the registry learns a server's tools: nothing starts when the agent is
built. At the start of each turn, every server whose tool set is on and whose
tools are not known yet is started and listed on the agent's loop, with a
timeout (``AgentConfig.mcp_timeout``, or the server's own ``timeout``); its
tools then join the registry and the system prompt for this and later turns.
A server that fails to start is reported as an ``error`` event (kind "mcp")
and tried again on the next turn. A server that crashes later keeps its tool
list: the next call restarts it. A server that sends notifications/tools/list_changed
is listed again before the next turn; its tool set then holds the new tools, and a
``settings_changed`` event (``mcp_tools``: each server's tool names) tells front ends. A server from the
workspace's ``.nbagent/mcp.json`` starts only once the user approved its command for this workspace
(nbagent.workspace.trust; nbagent.engine.stored_commands asks at the start of a turn).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from .. import events as ev
from ..errors import ConfigError
from ..workspace.state_dir import MCP_LOGS
from .config import USER_SOURCES, MCPServerConfig, load_servers, parse_server
from .connection import MCPConnection, MCPServerError
from .tools import make_tools, result_text, run_cancellable
from ..workspace.trust import is_trusted

if TYPE_CHECKING:
    from ..config import AgentConfig
    from ..workspace.procs import ProcessTracker
    from ..tools.base import Registry
    from ..workspace.root import Workspace


class MCPManager:
    def __init__(self, config: "AgentConfig", workspace: "Workspace", processes: "ProcessTracker | None" = None):
        self.config = config
        self.workspace = workspace
        self.problems: list[str] = []
        self.servers = self._load(config)
        self.connections = {
            name: MCPConnection(cfg, workspace=workspace.root, log_dir=workspace.state_dir / MCP_LOGS,
                                timeout=config.mcp_timeout)
            for name, cfg in self.servers.items()
        }
        self.listed: set[str] = set()
        self.made: dict[str, list] = {}
        """The nbagent Tools of each listed server, kept so a rebuilt registry gets them back."""
        self.in_flight: dict[asyncio.Task, asyncio.Future] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._remove_hook: Callable[[], None] | None = (
            processes.add_stop_hook(self._stop_from_any_thread) if processes is not None else None)

    def _load(self, config: "AgentConfig") -> dict[str, MCPServerConfig]:
        # Settings given in code are checked now (a mistake there is the caller's to fix at once);
        # a broken file is reported on the first turn and leaves the agent working without MCP.
        settings = config.mcp_servers or {}
        entries = settings.get("mcpServers", settings) if isinstance(settings, dict) else settings
        if not isinstance(entries, dict):
            raise ConfigError("mcp_servers must be {\"mcpServers\": {name: {...}}} or {name: {...}}")
        for name, entry in entries.items():
            parse_server(name, entry, "api")
        try:
            return load_servers(self.workspace.root, settings, self.problems)
        except ConfigError as exc:
            self.problems.append(str(exc))
            return {n: parse_server(n, e, "api") for n, e in entries.items()}

    # ----- which servers are on --------------------------------------------------------------
    def enabled(self, name: str) -> bool:
        """On when its tool set ``mcp:<name>`` is named, or "mcp" is on and the user configured it."""
        cfg = self.servers[name]
        if cfg.disabled:
            return False
        toolsets = self.config.toolsets
        return f"mcp:{name}" in toolsets or ("mcp" in toolsets and cfg.source in USER_SOURCES)

    def trusted(self, name: str) -> bool:
        """A server of the user's (or the code's) is; a workspace server once its launch is approved here."""
        cfg = self.servers[name]
        return cfg.source != "workspace" or is_trusted(self.workspace.root, cfg.launch_key())

    def awaiting_approval(self) -> list[str]:
        """Enabled workspace servers whose command (or URL) the user has not approved for this workspace."""
        return [n for n in self.servers if self.enabled(n) and n not in self.listed and not self.trusted(n)]

    def install(self, registry: "Registry", config: "AgentConfig | None" = None) -> None:
        """Put a tool set in the registry for every enabled server: its tools once listed, else empty.

        Called again with the new configuration when the agent is reconfigured (tool sets on or off)."""
        from ..tools.base import ToolSet

        if config is not None:
            self.config = config
        for name in self.servers:
            if self.enabled(name):
                tools = list(self.made.get(name, []))
                registry.add_toolset(ToolSet(f"mcp:{name}", tools, description=f"MCP server {name}"))

    async def refresh(self, registry: "Registry", emit: Callable[[ev.AnyEvent], None], turn_id: str) -> bool:
        """Start and list the enabled servers not listed yet; True when the registry changed."""
        self._loop = asyncio.get_running_loop()
        for problem in self.problems:
            emit(ev.Error(message=problem, kind="mcp", turn_id=turn_id))
        self.problems = []
        # A workspace server not approved here waits (nbagent.engine.stored_commands asks, then calls this again).
        pending = [n for n in self.servers if self.enabled(n) and n not in self.listed and self.trusted(n)]
        relist = [n for n in self.servers if self.enabled(n) and n in self.listed
                  and self.connections[n].tools_changed]
        if not pending and not relist:
            return False
        results = await asyncio.gather(*(self.connections[n].ensure_started() for n in pending),
                                       *(self.connections[n].relist() for n in relist), return_exceptions=True)
        changed = False
        for name, result in zip(pending + relist, results):
            if isinstance(result, BaseException):
                emit(ev.Error(message=str(result), kind="mcp", turn_id=turn_id))
                continue
            taken = {t.name for t in registry if t.toolset != f"mcp:{name}"}
            self.made[name] = make_tools(self.servers[name], self.call, name, result, taken)
            registry.replace_tools(f"mcp:{name}", self.made[name])
            self.listed.add(name)
            changed = True
        if relist and changed:  # front ends show the servers' tools: tell them the new lists
            emit(ev.SettingsChanged(settings={"mcp_tools": {n: [t.name for t in self.connections[n].tools or []]
                                                           for n in sorted(self.listed)}}, turn_id=turn_id))
        return changed

    # ----- calls -----------------------------------------------------------------------------
    async def call(self, server: str, tool: str, arguments: dict[str, Any], ctx: Any = None) -> str:
        self._loop = asyncio.get_running_loop()
        connection = self.connections[server]
        result = await run_cancellable(self.in_flight, connection.call(tool, arguments), server,
                                       connection.settle_after_cancel)
        return result_text(result)

    def _stop_from_any_thread(self) -> int:
        """The Stop hook: end every call in flight (the tools report them killed)."""
        loop, count = self._loop, len(self.in_flight)
        if loop is not None and count and not loop.is_closed():
            loop.call_soon_threadsafe(self._stop_calls)
        return count

    def _stop_calls(self) -> None:
        for stop in list(self.in_flight.values()):
            if not stop.done():
                stop.set_result(None)

    # ----- status and closing ----------------------------------------------------------------
    def status(self) -> list[dict[str, Any]]:
        """One row per configured server, for /mcp and ``nbagent mcp list``."""
        rows = []
        for name, cfg in self.servers.items():
            conn = self.connections[name]
            rows.append({
                "name": name, "source": cfg.source, "transport": cfg.transport, "target": cfg.describe(),
                "enabled": self.enabled(name), "status": conn.status if self.trusted(name) else "needs approval",
                "error": conn.error,
                "trust": dict(cfg.trust) if cfg.source in USER_SOURCES else {"*": "ask"},
                "tools": [t.name for t in conn.tools or []],
            })
        return rows

    async def list_now(self, name: str) -> list[Any]:
        """Start ``name`` (even when its tool set is off) and return its tools: for ``nbagent mcp list``.
        A workspace server not approved here is not started: listing runs nothing untrusted."""
        if not self.trusted(name):
            return []
        return await self.connections[name].ensure_started()

    async def aclose(self) -> None:
        if self._remove_hook is not None:
            self._remove_hook()
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)


__all__ = ["MCPManager", "MCPServerError"]
