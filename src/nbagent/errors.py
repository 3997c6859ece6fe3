"""Exceptions shared by the engine, the tools and the front ends."""

from __future__ import annotations

__all__ = ["AgentClosed", "CommandKilled", "ConfigError", "MissingSetting", "ModelError", "NbagentError", "StoreError",
           "ToolError", "ToolRegistrationError", "TurnAborted"]


class NbagentError(Exception):
    """Base of every error nbagent raises on purpose."""


class ConfigError(NbagentError):
    """The configuration cannot work (no endpoint, bad option); the message says how to fix it."""


class ToolError(NbagentError):
    """A tool failed in a way the model can act on: the message goes back to it as the result."""


class CommandKilled(ToolError):
    """The user stopped the command in flight; reported as "killed by the user", never as an exit code."""

    def __init__(self, message: str = "killed by the user"):
        super().__init__(message)


class ToolRegistrationError(NbagentError):
    """A Python function cannot become a tool (a missing type hint, a duplicate name)."""


class ModelError(NbagentError):
    """A model call failed after retries. ``kind`` is one of: auth, not_found, rate_limit,
    server, context_overflow, stream_broken, timeout, bad_request, connection."""

    def __init__(self, message: str, kind: str = "error", status_code: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status_code = status_code


class TurnAborted(NbagentError):
    """Raised inside a turn when the user aborts it."""


class StoreError(NbagentError):
    """The state database cannot be used (newer schema, corrupt file)."""


class AgentClosed(NbagentError, RuntimeError):
    """The agent was closed: it takes no more prompts or settings."""


class MissingSetting(ConfigError):
    """A setting the configuration needs was not given. Each front end names it in its own words
    (``--model NAME`` in the CLI, ``%agent --model NAME`` in a notebook); ``str()`` is the Python API's."""

    def __init__(self, problem: str, setting: str, env: str):
        self.problem, self.setting, self.env = problem, setting, env
        super().__init__(self.worded(f"pass {setting}=..."))

    def worded(self, how: str) -> str:
        """The message with ``how`` as the front end's way to give the setting ("pass --model NAME")."""
        return f"{self.problem}: set {self.env} or {how}"
