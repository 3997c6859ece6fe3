"""``NbAgent``: the traitlets face of AgentConfig, for ipython_config.py and ``%config``.

``c.NbAgent.model = "..."`` in ipython_config.py (or ``%config NbAgent.model = "..."``) configures the
agent the magics build.

Every trait defaults to None, meaning "not set here": AgentConfig's defaults and its environment
variables then apply. Only the set traits are passed on.
"""

from __future__ import annotations

from typing import Any

from traitlets import Bool, CaselessStrEnum, Dict, Float, Int, List, Unicode
from traitlets.config import Configurable

from ...config import APIS, APPROVAL_MODES
from .frontend import VIEW_MODES


class NbAgent(Configurable):
    model = Unicode(None, allow_none=True, config=True, help="Model name sent to the endpoint.")
    base_url = Unicode(None, allow_none=True, config=True,
                       help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.")
    api_key = Unicode(None, allow_none=True, config=True, help="API key (local servers accept any value).")
    api = CaselessStrEnum(APIS, default_value=None, allow_none=True, config=True,
                          help="Wire protocol: chat or responses.")
    toolsets = List(Unicode(), default_value=None, allow_none=True, config=True,
                    help="Tool sets to enable; core is always on.")
    approval = CaselessStrEnum(APPROVAL_MODES, default_value=None, allow_none=True, config=True,
                               help="ask, auto or read-only.")
    max_steps = Int(None, allow_none=True, config=True, help="Model calls per turn.")
    memory = Bool(None, allow_none=True, config=True, help="Load and write project memory.")
    workspace = Unicode(None, allow_none=True, config=True,
                        help="Workspace root; default: the git repository holding the notebook, else the "
                             "Jupyter server's root directory, else the notebook's directory.")
    temperature = Float(None, allow_none=True, config=True, help="Sampling temperature.")
    reasoning_effort = Unicode(None, allow_none=True, config=True, help="low, medium or high.")
    local = CaselessStrEnum(("auto", "on", "off"), default_value=None, allow_none=True, config=True,
                            help="The offline model: auto (when no endpoint is configured), on or off.")
    persist = Bool(None, allow_none=True, config=True, help="Store sessions in the workspace database.")
    extra_instructions = Unicode(None, allow_none=True, config=True, help="Appended to the system prompt.")
    mcp_servers = Dict(None, allow_none=True, config=True,
                       help='MCP servers: {"mcpServers": {name: {"command", "args", "env", "cwd"} | '
                            '{"url", "headers"}}}, added to the user\'s and the workspace\'s mcp.json.')
    view = CaselessStrEnum(VIEW_MODES, default_value=None, allow_none=True, config=True,
                           help="auto (widgets when a widget frontend is connected), widgets or text. "
                                "Env: NBAGENT_VIEW.")

    background = Bool(None, allow_none=True, config=True,
                      help="Run %agent turns in the background (default inside a kernel; a terminal "
                           "shell waits, having no buttons). --wait always waits.")

    AGENT_FIELDS = ("model", "base_url", "api_key", "api", "toolsets", "approval", "max_steps", "memory",
                    "workspace", "temperature", "reasoning_effort", "local", "persist", "extra_instructions",
                    "mcp_servers")

    def agent_settings(self) -> dict[str, Any]:
        """The AgentConfig fields set through traitlets (unset ones are left out)."""
        values = {name: getattr(self, name) for name in self.AGENT_FIELDS}
        if values["toolsets"] is not None:
            values["toolsets"] = tuple(values["toolsets"])
        return {k: v for k, v in values.items() if v is not None}
