"""The MCP servers' status as text, shared by ``nbagent mcp list`` and the kernel's ``/mcp`` command."""

from __future__ import annotations

from ..render.escape import escape_controls


def format_status(rows: list[dict]) -> str:
    """The servers as text; what a server said about itself is shown with control characters escaped."""
    lines = []
    for row in rows:
        state = "on" if row["enabled"] else "off"
        trust = ", ".join(f"{k}: {v}" for k, v in row["trust"].items()) or "*: ask"
        lines.append(f"{plain(row['name'])}  [{row['transport']}, {row['source']}, tool set {state}, "
                     f"{row['status']}, trust {trust}]  {plain(row['target'])}")
        if row["error"]:
            lines.append(f"    error: {plain(row['error'])}")
        if row["tools"]:
            lines.append("    tools: " + ", ".join(plain(t) for t in row["tools"]))
    return "\n".join(lines)


def plain(text: str) -> str:
    return escape_controls(str(text), keep_newlines=False)
