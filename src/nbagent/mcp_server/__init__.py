"""``nbagent mcp serve``: nbagent's tools served over MCP, a front end (the MCP client the engine uses is nbagent.mcp)."""
