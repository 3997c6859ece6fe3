"""MCP both ways: outside servers' tools for the agent (client) and nbagent's tools for outside agents.

The client side is ``MCPManager`` (one per agent, see manager.py); the server side is
``nbagent mcp serve`` (serve.py). The ``mcp`` SDK is imported only when a server is used.
"""

from .config import MCPServerConfig, load_servers, parse_server
from .manager import MCPManager, MCPServerError

__all__ = ["MCPManager", "MCPServerConfig", "MCPServerError", "load_servers", "parse_server"]
