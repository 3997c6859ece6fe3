"""Secrets this process holds that no tool result may carry into the transcript.

The kernel-side link to the Jupyter server reads a secret from a 0600 file. The agent's own shell
tool could print that file; every tool result passes through ``limit_output``, which replaces each
registered secret with a placeholder before anything is shown, stored or sent to the model.

Endpoint URLs can carry credentials too (``https://user:token@host/v1?key=...``): ``public_url``
keeps only scheme, host, port and path for what is stored (a session's provider), listed and shown.
"""

from __future__ import annotations

import functools
import threading
from urllib.parse import urlsplit, urlunsplit

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


@functools.lru_cache(maxsize=64)  # called for every message sent and received; a pure function of ``url``
def public_url(url: str | None) -> str:
    """``url`` without user name, password, query string or fragment ("" for None)."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL at all: show nothing of it rather than a secret
        return "(invalid URL)"
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
