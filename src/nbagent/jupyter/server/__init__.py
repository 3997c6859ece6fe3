"""The jupyter-server extension: REST and a WebSocket per session under /nbagent/api/.

Enabled on install by jupyter-config/server-config/nbagent.json; docs/jupyterlab.md
describes the API.
"""

from __future__ import annotations


def _jupyter_server_extension_points() -> list[dict]:
    from .app import NbAgentServer

    return [{"module": "nbagent.jupyter.server", "app": NbAgentServer}]
