"""The panel's settings on the server: model, tool sets and approval mode for the agents it opens.

They start from the server's configuration (``c.NbAgentServer.*``, then the
environment through AgentConfig) and change with PUT /nbagent/api/settings,
which the panel sends from JupyterLab's settings registry.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from ...config import APPROVAL_MODES, DEFAULT, DEFAULT_TOOLSETS
from ...errors import ConfigError


@dataclass
class ServerSettings:
    model: str | None = None
    """None: the configured default (NBAGENT_MODEL or the endpoint's)."""
    toolsets: tuple[str, ...] | None = None
    """None: the configured default (NBAGENT_TOOLSETS or all)."""
    approval: str | None = None
    """None: the configured default (NBAGENT_APPROVAL or "ask")."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["toolsets"] = list(self.toolsets) if self.toolsets is not None else None
        return data

    def agent_options(self) -> dict[str, Any]:
        """Keyword arguments for Agent(); unset ones are left to the configuration."""
        return {k: v for k, v in (("model", self.model), ("toolsets", self.toolsets),
                                  ("approval", self.approval)) if v is not None}

    def live_options(self) -> dict[str, Any]:
        """Keyword arguments for ``Agent.reconfigure`` on the open agents: an unset setting goes back to
        the configured default (the panel cleared it), rather than staying as it was."""
        return {"model": DEFAULT if self.model is None else self.model,
                "toolsets": DEFAULT if self.toolsets is None else self.toolsets,
                "approval": DEFAULT if self.approval is None else self.approval}

    def updated(self, changes: Any) -> "ServerSettings":
        """A copy with ``changes`` (a JSON object) applied; ConfigError says what is wrong."""
        if not isinstance(changes, dict):
            raise ConfigError("settings must be a JSON object with model, toolsets and/or approval")
        unknown = set(changes) - {"model", "toolsets", "approval"}
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))} (model, toolsets, approval)")
        new = ServerSettings(self.model, self.toolsets, self.approval)
        if "model" in changes:
            new.model = _model(changes["model"])
        if "toolsets" in changes:
            new.toolsets = _toolsets(changes["toolsets"])
        if "approval" in changes:
            new.approval = _approval(changes["approval"])
        return new


def session_changes(message: dict[str, Any]) -> dict[str, Any]:
    """The ``model``, ``approval``, ``toolsets`` and/or ``review_before_writing`` of a "settings" message from
    one session's panel,
    checked, as keyword arguments for that agent's ``reconfigure``; ConfigError says what is wrong."""
    changes = {k: message[k] for k in ("model", "approval", "toolsets", "review_before_writing") if k in message}
    if not changes:
        raise ConfigError('a "settings" message gives "model", "approval", "toolsets" and/or '
                          '"review_before_writing"')
    if "review_before_writing" in changes and not isinstance(changes["review_before_writing"], bool):
        raise ConfigError("review_before_writing must be true or false")
    if "toolsets" in changes:
        changes["toolsets"] = _toolsets(changes["toolsets"]) or ("core",)
    if "model" in changes:
        model = changes["model"]
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("model must be a model's name")
        changes["model"] = model.strip()
    if "approval" in changes and changes["approval"] not in APPROVAL_MODES:
        raise ConfigError(f"approval must be one of {', '.join(APPROVAL_MODES)}, not {changes['approval']!r}")
    return changes


def _model(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError("model must be a string (or null for the configured default)")
    return value.strip()


def _toolsets(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError("toolsets must be a list of tool set names")
    # "mcp:<name>" switches on one MCP server's tool set (see docs/mcp.md)
    unknown = [v for v in value if v not in DEFAULT_TOOLSETS and not re.fullmatch(r"mcp:[^\s:]{1,64}", v)]
    if unknown:
        raise ConfigError(f"unknown tool set(s): {', '.join(unknown)} (known: {', '.join(DEFAULT_TOOLSETS)})")
    return tuple(dict.fromkeys(["core", *value]))


def _approval(value: Any) -> str | None:
    if value is None:
        return None
    if value not in APPROVAL_MODES:
        raise ConfigError(f"approval must be one of {', '.join(APPROVAL_MODES)}, not {value!r}")
    return value


AVAILABLE = {"toolsets": [*DEFAULT_TOOLSETS, "read"], "approval": list(APPROVAL_MODES)}
""""read" is the small profile's tool set (nbagent.engine.profiles), on by default only for the offline model."""
