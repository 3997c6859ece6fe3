"""notebook_run on the server: two runs in one kernel at once each get their own replies (each kernel
client has a session, so a ZMQ identity, of its own)."""

from __future__ import annotations

import asyncio

import pytest

from .live_helpers import start_kernel, write_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.integration]


async def test_two_runs_in_one_kernel_at_once(jp_serverapp, jp_root_dir, jp_fetch):
    ids = write_notebook(jp_root_dir, "twice.ipynb", [("code", "import time\ntime.sleep(0.5)\n'slow'"),
                                                      ("code", "'quick'")])
    await start_kernel(jp_fetch, "twice.ipynb")
    app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    slow, quick = await asyncio.wait_for(asyncio.gather(
        app.notebooks.arun("twice.ipynb", "twice.ipynb", [ids[0]], caller_kernel=None),
        app.notebooks.arun("twice.ipynb", "twice.ipynb", [ids[1]], caller_kernel=None)), 60)
    assert slow["cells"][0]["outputs"][0]["data"]["text/plain"] == "'slow'"
    assert quick["cells"][0]["outputs"][0]["data"]["text/plain"] == "'quick'"
