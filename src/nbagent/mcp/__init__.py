"""MCP both ways: outside servers' tools for the agent (client) and nbagent's tools for outside agents.

The client side is ``MCPManager`` (one per agent, see manager.py); the server side is
``nbagent mcp serve`` (serve.py). The ``mcp`` SDK is imported only when a server is used.
"""

from .config import MCPServerConfig, load_servers, parse_server
from .manager import MCPManager, MCPServerError

__all__ = ["MCPManager", "MCPServerConfig", "MCPServerError", "load_servers", "parse_server", "sdk_problem"]


def sdk_problem() -> str | None:
    """Why the ``mcp`` SDK cannot be used here (not installed, or a 1.x one: Jupyter AI 3's environment pins
    ``mcp<2``), or None. Read from the package's metadata: nothing is imported."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("mcp")
    except PackageNotFoundError:
        return 'the mcp package is not installed (pip install "jupyter-nbagent[mcp]")'
    major = found.split(".", 1)[0]
    if not major.isdigit() or int(major) < 2:
        return f"nbagent's MCP client and server need mcp>=2; this environment has mcp {found}"
    return None
