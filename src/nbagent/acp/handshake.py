"""The ``initialize`` answer, as plain JSON: the client hears back before the SDK's schema is imported.

The SDK's 5,800 lines of pydantic models take longer to import than an editor should wait for an agent to
say hello, so ``nbagent acp`` answers the first ``initialize`` from here, then a thread imports the SDK and
the engine. The tests check this answer against the SDK's ``InitializeResponse``; ``server`` answers a
later ``initialize`` with the same data.
"""

from __future__ import annotations

from typing import Any

PROTOCOL_VERSION = 1
"""The ACP version nbagent speaks (the SDK's ``acp.PROTOCOL_VERSION``; a test keeps them equal)."""


def capabilities(client_version: Any) -> dict[str, Any]:
    """The ``initialize`` result (JSON, as the protocol spells it) for a client asking ``client_version``."""
    import nbagent

    version = client_version if isinstance(client_version, int) and client_version < PROTOCOL_VERSION \
        else PROTOCOL_VERSION
    return {
        "protocolVersion": version,
        "agentCapabilities": {
            "loadSession": True,
            # A prompt is text: images and audio are refused; embedded text resources come in as context.
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {"list": {}},
        },
        "authMethods": [],
        "agentInfo": {"name": "nbagent", "title": "nbagent", "version": str(nbagent.__version__)},
    }


def answer(line: bytes) -> tuple[bytes | None, dict[str, Any] | None]:
    """The answer to the first line a client sends when it is ``initialize`` (and the client's
    capabilities), else (None, None): that line is then the SDK's to answer."""
    import json

    try:
        message = json.loads(line)
    except ValueError:
        return None, None
    if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
        return None, None
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    result = capabilities(params.get("protocolVersion"))
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    return (json.dumps(reply, separators=(",", ":")) + "\n").encode(), params.get("clientCapabilities") or {}
