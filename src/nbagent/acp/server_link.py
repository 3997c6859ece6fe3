"""The Jupyter server that started ``nbagent acp`` (the Jupyter AI persona): its live notebooks and its kernels.

A Jupyter server running nbagent's extension puts its link file's path in the environment of every process
it starts (NBAGENT_SERVER_INFO, nbagent.jupyter.server.kernel_secret), the persona's ``nbagent acp``
included. Then, as for ``%agent`` in one of its kernels, the notebook tools read and write through that
server, the one writer of notebooks: the collaboration room's live document when the notebook is open in
one, else the tab's open view, else the file; ``notebook_run`` runs cells in the notebook's kernel. The
kernel tools (``kernel_variables``, ``kernel_inspect``, ``kernel_run``, each naming its kernel by id or by
notebook path) reach the server's kernels with the server's own token, read from its 0600 info file in
Jupyter's runtime directory (the one for the link file's server process). Without the variable, or for
files outside that server's root, nothing changes: the file itself.
"""

from __future__ import annotations

import threading
from typing import Any

from ..render.redaction import logger, register_secret

log = logger("nbagent.acp")

KERNEL_TOOLS = ("kernel_variables", "kernel_inspect", "kernel_run")
"""The served kernel tools an ACP session gets (kernel_undo and kernel_redo are the MCP route's: the agent
has its own undo)."""

_LOCK = threading.Lock()
_TOOLS: list[list[Any]] = []


def server_tools() -> list[Any]:
    """Connect this process to the server that started it, once; the kernel tools for its sessions
    ([] when no server started it, or its kernels cannot be reached)."""
    with _LOCK:
        if not _TOOLS:
            _TOOLS.append(_connect())
        return _TOOLS[0]


def _connect() -> list[Any]:
    from ..jupyter.kernel import server_client

    info = server_client.link_info()
    if info is None or server_client.connect() is None:
        return []
    server = server_client.server_info(info.get("pid"))
    if server is None:
        log.info("the Jupyter server's info file was not found: no kernel tools (notebook tools still go there)")
        return []
    token = str(server.get("token") or "")
    if len(token) >= 16:
        register_secret(token)  # no tool result shows it
    from ..jupyter.remote.kernel_tools import kernel_toolset, token_kernels

    tools = kernel_toolset(token_kernels(str(server["url"]), token), choose=True).tools
    return [t for t in tools if t.name in KERNEL_TOOLS]
