"""A real MCP server for the tests, written with the SDK's MCPServer.

Run as ``python toy_server.py`` (stdio) or ``python toy_server.py http PORT`` (streamable HTTP on
127.0.0.1). Its tools: echo, add, huge (a big output), picture (an image), remove_everything
(annotated destructive), read_thing (annotated read-only), crash (the process exits), hang (waits,
cancellable), block (blocks the server's loop: only a kill ends it), title_arg (an argument named
"title"), pid (the server's process id), and grow (adds a tool named by its argument and sends
notifications/tools/list_changed).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("toy")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def huge(lines: int) -> str:
    """Return a big text of numbered lines."""
    return "\n".join(f"line {i:06d} " + "x" * 60 for i in range(lines))


@server.tool()
def picture() -> Image:
    """Return a tiny PNG image."""
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
    return Image(data=png, format="png")


@server.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False))
def remove_everything(where: str) -> str:
    """Pretend to remove everything under a place."""
    return f"removed everything under {where}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_thing(key: str) -> str:
    """Read a thing (annotated read-only)."""
    return f"thing {key}"


@server.tool()
def crash() -> str:
    """Exit the server process at once."""
    sys.stderr.write("toy server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Wait for an hour (cancellable)."""
    await asyncio.sleep(3600)
    return "woke up"


@server.tool()
async def block() -> str:
    """Block the whole server for an hour: it answers nothing until killed."""
    time.sleep(3600)
    return "unblocked"


@server.tool()
def title_arg(title: str) -> str:
    """Take an argument named title."""
    return f"title is {title}"


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called ``name`` (it returns its own name) and tell the client the tools changed."""

    def grown() -> str:
        return f"I am {name}"

    server.add_tool(grown, name=name, description=f"A tool added at run time: {name}.")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
