"""Secrets kept out of what nbagent stores and shows: user info and query strings in endpoint URLs.

A base URL such as ``https://user:token@host/v1?key=...`` works for the client,
but the session stores its provider, the REST API lists it and exports carry it:
only the scheme, host, port and path go there.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


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
