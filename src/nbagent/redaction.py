"""Secrets this process holds that no tool result may carry into the transcript.

The kernel-side link to the Jupyter server reads a secret from a 0600 file. The agent's own shell
tool could print that file; every tool result passes through ``limit_output``, which replaces each
registered secret with a placeholder before anything is shown, stored or sent to the model.
"""

from __future__ import annotations

import threading

PLACEHOLDER = "[secret redacted by nbagent]"
_SECRETS: set[str] = set()
_LOCK = threading.Lock()


def register_secret(secret: str) -> None:
    """Never let ``secret`` (at least 16 characters) appear in a tool's result."""
    if len(secret) < 16:
        raise ValueError("a secret to redact must be at least 16 characters (shorter ones match by chance)")
    with _LOCK:
        _SECRETS.add(secret)


def forget_secret(secret: str) -> None:
    with _LOCK:
        _SECRETS.discard(secret)


def redact(text: str) -> str:
    if not _SECRETS:
        return text
    with _LOCK:
        secrets = list(_SECRETS)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, PLACEHOLDER)
    return text
