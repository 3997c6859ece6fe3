"""What an ACP client may choose: approval modes as session modes, the model, a permission request's answers.

The approval modes are the session modes, the model is a config option (category "model"), and a permission
request offers allow once, allow always and reject, whose option ids are nbagent's own decisions.
"""

from __future__ import annotations

from typing import Any

from acp import schema as s

MODES = (
    s.SessionMode(id="ask", name="Ask", description="Ask before every call that changes something"),
    s.SessionMode(id="auto", name="Auto", description="Run calls without asking (MCP tools and kernel_run "
                                                      "still ask unless trusted)"),
    s.SessionMode(id="read-only", name="Read-only", description="Change nothing: every changing call is denied"),
)
MODE_IDS = tuple(m.id for m in MODES)

PERMISSIONS = (
    s.PermissionOption(option_id="approve", name="Allow once", kind="allow_once"),
    s.PermissionOption(option_id="always", name="Allow always", kind="allow_always"),
    s.PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
)
"""The option ids are nbagent's decisions (Agent.decide), so an answer needs no table."""

MODEL_OPTION = "model"


def mode_state(approval: str) -> s.SessionModeState:
    return s.SessionModeState(current_mode_id=approval if approval in MODE_IDS else "ask",
                              available_modes=list(MODES))


def config_options(model: str, choices: list[str]) -> list[Any]:
    """The session's settings a client may change: the model (the configured one first, then what the
    endpoint lists)."""
    names = list(dict.fromkeys([model, *choices]))
    return [s.SessionConfigOptionSelect(
        type="select", id=MODEL_OPTION, name="Model", category="model", current_value=model,
        description="The model nbagent asks (the endpoint nbagent is configured for)",
        options=[s.SessionConfigSelectOption(value=n, name=n) for n in names])]


def decision(response: s.RequestPermissionResponse) -> str:
    """nbagent's decision for a client's answer; a cancelled request (the turn was cancelled) denies."""
    outcome = response.outcome
    if isinstance(outcome, s.AllowedOutcome) and outcome.option_id in ("approve", "always", "deny"):
        return outcome.option_id
    return "deny"
