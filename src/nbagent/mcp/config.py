"""MCP server configuration: the ``{"mcpServers": {...}}`` files and settings, merged and checked.

Sources, later ones winning per server name: the user's config dir
(``<platformdirs user_config_dir>/nbagent/mcp.json``, or ``$NBAGENT_CONFIG_DIR/mcp.json``), the
workspace's ``.nbagent/mcp.json``, then ``AgentConfig.mcp_servers`` (the Python API and
``c.NbAgent.mcp_servers``). The workspace is not trusted: a server it defines starts only when the
user switches its tool set ``mcp:<name>`` on by name AND approved its exact command (or URL) for this
workspace (nbagent.workspace.trust); its ``trust`` is ignored (a cloned repository must not be able to
mark its own tools as safe), and it never replaces a server of the user's with the same name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..config import user_config_dir as _user_config_dir
from ..errors import ConfigError

TRUST_LEVELS = ("ask", "always", "read")
"""ask: ask even in auto mode (the default); always: ask in ask mode, run in auto; read: never ask."""

USER_SOURCES = ("user", "api")
"""Sources whose servers are on with the "mcp" tool set and whose ``trust`` counts."""

_STDIO_KEYS = {"command", "args", "env", "cwd"}
_HTTP_KEYS = {"url", "headers"}
_COMMON_KEYS = {"trust", "disabled", "timeout", "type", "transport", "description"}
_KINDS = {"stdio": ("stdio",), "http": ("http", "streamable-http", "streamable_http", "streamableHttp")}


@dataclass(frozen=True)
class MCPServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    trust: Mapping[str, str] = field(default_factory=dict)
    """Trust per tool name; "*" is every other tool of the server. Empty: ask for every call."""
    disabled: bool = False
    timeout: float | None = None
    """Seconds for start-up and listing; None: AgentConfig.mcp_timeout."""
    source: str = "api"
    """Where it was defined: "user", "workspace" or "api"."""

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    def trust_for(self, tool: str) -> str:
        if self.source not in USER_SOURCES:
            return "ask"
        return self.trust.get(tool, self.trust.get("*", "ask"))

    def launch_key(self) -> str:
        """Exactly what starting this server runs (or reaches): a workspace server starts only once the user
        approved this text for the workspace (nbagent.workspace.trust); any change to it asks again."""
        if self.command:
            launch: dict[str, Any] = {"command": self.command, "args": list(self.args), "env": dict(self.env),
                                      "cwd": self.cwd}
        else:
            launch = {"url": self.url, "headers": dict(self.headers)}
        return "mcp server " + json.dumps(launch, sort_keys=True, ensure_ascii=False)

    def describe(self) -> str:
        if self.command:
            return " ".join([self.command, *self.args])
        return self.url or ""


def user_config_dir() -> Path:
    """The user's config folder, where ``mcp.json`` is (nbagent.config.user_config_dir)."""
    return _user_config_dir()


def load_servers(workspace: Path, settings: Mapping[str, Any] | None = None,
                 problems: list[str] | None = None) -> dict[str, MCPServerConfig]:
    """Every configured server by name: user file, then workspace file, then settings. A workspace server
    named like one of the user's is ignored (and said so in ``problems``): a cloned repository must not
    replace the user's own server with its program."""
    servers: dict[str, MCPServerConfig] = {}
    for source, raw in (("user", _read_file(user_config_dir() / "mcp.json")),
                        ("workspace", _read_file(workspace / ".nbagent" / "mcp.json")),
                        ("api", settings)):
        for name, entry in _server_entries(raw, source).items():
            if source == "workspace" and name in servers:
                if problems is not None:
                    problems.append(f"the workspace's .nbagent/mcp.json defines an MCP server {name!r}, as your "
                                    "own configuration does: yours is used, the workspace's is ignored")
                continue
            servers[name] = parse_server(name, entry, source)
    return servers


def _read_file(path: Path) -> Mapping[str, Any] | None:
    """The file's JSON object; None when there is none. A symlink or a non-file is refused."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise ConfigError(f"{path}: not a regular file; MCP configuration must be a plain JSON file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); fix or remove it") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must hold a JSON object with an \"mcpServers\" object")
    return data


def _server_entries(raw: Mapping[str, Any] | None, source: str) -> Mapping[str, Any]:
    if not raw:
        return {}
    entries = raw.get("mcpServers", raw) if isinstance(raw, Mapping) else None
    if not isinstance(entries, Mapping):
        raise ConfigError(f"MCP configuration ({source}): \"mcpServers\" must be an object of servers by name")
    return entries


def parse_server(name: str, entry: Any, source: str = "api") -> MCPServerConfig:
    """One server's entry, checked: a clear ConfigError names the server and the problem."""
    where = f"MCP server {name!r} ({source})"
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        raise ConfigError(f"MCP server names must be non-empty strings of at most 64 characters: {name!r}")
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: must be an object with \"command\" or \"url\"")
    unknown = set(entry) - _STDIO_KEYS - _HTTP_KEYS - _COMMON_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise ConfigError(f"{where}: give exactly one of \"command\" (stdio) or \"url\" (streamable HTTP)")
    if has_command and set(entry) & _HTTP_KEYS or has_url and set(entry) & _STDIO_KEYS:
        raise ConfigError(f"{where}: mixes stdio keys (command, args, env, cwd) with HTTP keys (url, headers)")
    kind = entry.get("type", entry.get("transport"))
    if kind is not None and kind not in _KINDS["stdio" if has_command else "http"]:
        raise ConfigError(f"{where}: transport {kind!r} is not supported with "
                          f"{'command' if has_command else 'url'}; nbagent speaks stdio and streamable HTTP")
    return MCPServerConfig(
        name=name,
        command=_string(entry, "command", where) if has_command else None,
        args=tuple(_string_list(entry.get("args", []), where)),
        env=_string_map(entry.get("env", {}), "env", where),
        cwd=_string(entry, "cwd", where) if "cwd" in entry else None,
        url=_url(entry, where) if has_url else None,
        headers=_string_map(entry.get("headers", {}), "headers", where),
        trust=_trust(entry.get("trust", "ask"), where),
        disabled=bool(entry.get("disabled", False)),
        timeout=_timeout(entry.get("timeout"), where),
        source=source,
    )


def _string(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise ConfigError(f"{where}: \"{key}\" must be a non-empty string")
    return value


def _string_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and "\0" not in v for v in value):
        raise ConfigError(f"{where}: \"args\" must be a list of strings")
    return value


def _string_map(value: Any, key: str, where: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in value.items()):
        raise ConfigError(f"{where}: \"{key}\" must be an object of strings")
    return dict(value)


def _url(entry: Mapping[str, Any], where: str) -> str:
    url = _string(entry, "url", where)
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: \"url\" must start with http:// or https://")
    return url


def _trust(value: Any, where: str) -> dict[str, str]:
    table = {"*": value} if isinstance(value, str) else value
    if not isinstance(table, Mapping) or not all(isinstance(v, str) and v in TRUST_LEVELS
                                                 for v in table.values()):
        raise ConfigError(f"{where}: \"trust\" must be one of {', '.join(TRUST_LEVELS)}, or an object of "
                          "tool name to one of them (\"*\" for the others)")
    return dict(table)


def _timeout(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}: \"timeout\" must be a positive number of seconds")
    return float(value)
