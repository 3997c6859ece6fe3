"""A real Jupyter server with Jupyter AI 3's chat stack (jupyterlab-chat, the router, the persona manager and
jupyter-ai-acp-client) and nbagent's persona, behind the scripted OpenAI-compatible server.

Jupyter AI 3 cannot be installed beside ``jupyter-nbagent[mcp]`` (its MCP server extension pins ``mcp<2``,
nbagent's MCP client needs ``mcp>=2``), so the test environment does not have it and these tests are skipped
there; docs/acp.md says how to run them in an environment of their own.
"""

from __future__ import annotations

import asyncio
import importlib.util

import pytest_asyncio

if importlib.util.find_spec("jupyter_ai_acp_client") is not None:  # else test_persona.py skips itself
    from pytest_jupyter.jupyter_core import *  # noqa: F401,F403  (jp_environ and friends)
    from pytest_jupyter.jupyter_server import *  # noqa: F401,F403  (jp_fetch, jp_ws_fetch, ...)

    # As in tests/jupyter/server: pytest-asyncio runs the tests, pytest-jupyter only provides the server fixtures.
    del pytest_pycollect_makeitem, pytest_pyfunc_call  # noqa: F821

    @pytest_asyncio.fixture
    async def jp_asyncio_loop():
        yield asyncio.get_running_loop()
