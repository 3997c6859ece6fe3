"""``nbagent mcp list`` (configured MCP servers, their status and tools) and ``nbagent mcp serve``."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
from pathlib import Path

from ..config import APPROVAL_MODES
from ..mcp.status import format_status


def add_mcp_parser(sub, parents=()) -> None:
    """``parents`` carry the options every command takes (--workspace), before or after the command."""
    mcp = sub.add_parser("mcp", help="MCP servers: list the configured ones, or serve nbagent's tools",
                         parents=list(parents))
    actions = mcp.add_subparsers(dest="mcp_command")
    listing = actions.add_parser("list", help="configured MCP servers, their status and tools",
                                 parents=list(parents))
    listing.add_argument("--no-start", action="store_true", help="do not start servers to list their tools")
    listing.set_defaults(handler=_list)
    serve = actions.add_parser("serve", help="serve nbagent's notebook and workspace tools over MCP",
                               parents=list(parents))
    serve.add_argument("--approval", choices=APPROVAL_MODES, default="ask",
                       help="how writes are approved on this side (default ask, on the terminal)")
    serve.add_argument("--toolsets", default="notebook",
                       help="comma-separated tool sets to serve: notebook (default), core, edit-plus, git "
                            "(kernel comes with --kernel)")
    serve.add_argument("--http", action="store_true", help="streamable HTTP on localhost instead of stdio")
    serve.add_argument("--host", default="127.0.0.1", help="with --http: 127.0.0.1 (default), localhost or ::1")
    serve.add_argument("--port", type=int, default=8765, help="with --http: the port (default 8765)")
    serve.add_argument("--token", help="with --http: the bearer token (default: env NBAGENT_MCP_TOKEN, "
                                       "else a random one, printed)")
    serve.add_argument("--jupyter-url", help="serve the kernel tools against a running kernel of the Jupyter "
                                             "server at this URL (with --kernel)")
    serve.add_argument("--jupyter-token", help="that server's token (default: env JUPYTER_TOKEN)")
    serve.add_argument("--kernel", help="the kernel: its id, the path of a notebook whose kernel it is, or a "
                                        "kernel name (python3) when only one of that name runs")
    serve.set_defaults(handler=_serve)
    mcp.set_defaults(handler=lambda args: (mcp.print_help(), 2)[1])


def _list(args: argparse.Namespace) -> int:
    from ..config import AgentConfig
    from ..mcp import MCPManager
    from ..workspace.root import Workspace

    config = AgentConfig.load(workspace=getattr(args, "workspace", None), persist=False)
    manager = MCPManager(config, Workspace(config.workspace))
    for problem in manager.problems:
        print(f"nbagent: {problem}", file=sys.stderr)
    if not manager.servers:
        print("no MCP servers configured (see docs/mcp.md)")
        return 0
    rows = manager.status() if args.no_start else asyncio.run(_start_all(manager))
    print(format_status(rows))
    return 0


async def _start_all(manager) -> list[dict]:
    """Start every server (its tool set on or off), take the status, stop them all."""
    try:
        await asyncio.gather(*(manager.list_now(name) for name in manager.servers), return_exceptions=True)
        return manager.status()
    finally:
        await manager.aclose()


def _through_jupyter_server() -> None:
    """Started inside JupyterLab (a terminal of a server running nbagent's extension, which passes
    NBAGENT_SERVER_INFO down): notebook reads, edits and runs go to that server, the one writer of
    notebooks (the live document when a notebook is open), exactly as a kernel's agent does."""
    from ..jupyter.kernel.server_client import connect

    store = connect()
    if store is not None:
        print(f"nbagent mcp: notebooks go through the Jupyter server at {store.url.rsplit('/nbagent/', 1)[0]}",
              file=sys.stderr, flush=True)


def _serve(args: argparse.Namespace) -> int:
    from ..errors import ToolError

    if bool(args.kernel) != bool(args.jupyter_url):
        print("nbagent mcp serve: --kernel and --jupyter-url go together", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve_async(args))
    except ToolError as exc:  # the Jupyter server or the kernel cannot be found
        print(f"nbagent mcp serve: {exc}", file=sys.stderr)
        return 1
    return 0


async def _kernel_tools(args: argparse.Namespace) -> list:
    """The kernel tool set for --kernel on --jupyter-url (the kernel checked now, looked up at each call)."""
    import os

    if not args.kernel:
        return []
    from ..jupyter.remote.kernel_tools import kernel_toolset, named_kernel
    from ..jupyter.remote.kernel import ServerKernel

    token = args.jupyter_token or os.environ.get("JUPYTER_TOKEN", "")
    found = await ServerKernel.find(args.jupyter_url, token, args.kernel)
    print(f"nbagent mcp: kernel tools on kernel {found.kernel_id} of {args.jupyter_url}", file=sys.stderr,
          flush=True)
    return [kernel_toolset(named_kernel(args.jupyter_url, token, args.kernel), choose=False)]


async def _serve_async(args: argparse.Namespace) -> None:
    import os

    from ..mcp_server.serve import ServedTools, serve_http, serve_stdio, terminal_approver

    extra = await _kernel_tools(args)
    toolsets = tuple(t.strip() for t in args.toolsets.split(",") if t.strip())
    toolsets += tuple(x.name for x in extra if x.name not in toolsets)
    served = ServedTools(Path(getattr(args, "workspace", None) or "."), toolsets=toolsets, approval=args.approval,
                         approver=terminal_approver, extra=extra)
    _through_jupyter_server()
    if not args.http:
        await serve_stdio(served)
        return
    token = args.token or os.environ.get("NBAGENT_MCP_TOKEN") or secrets.token_urlsafe(24)
    shown = "(given)" if args.token or os.environ.get("NBAGENT_MCP_TOKEN") else token

    def started(url: str) -> None:
        print(f"nbagent mcp: serving {', '.join(toolsets)} of {served.config.workspace} at {url}\n"
              f"  Authorization: Bearer {shown}", file=sys.stderr, flush=True)

    await serve_http(served, args.host, args.port, token, started)
