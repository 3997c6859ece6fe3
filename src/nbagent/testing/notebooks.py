"""Scripted answers for the example notebooks: fixed output when they are tested, your model otherwise.

``scripted_endpoint(*replies)`` does nothing unless NBAGENT_NOTEBOOKS_SCRIPTED=1 (set by
notebooks/conftest.py for nbval, and when the stored outputs are made). Then it starts the scripted
OpenAI-compatible server and points nbagent at it through the environment, so the notebook's %agent
cells (and any Agent made afterwards in that process) get these replies.
"""

from __future__ import annotations

import os

SCRIPTED_ENV = "NBAGENT_NOTEBOOKS_SCRIPTED"


def scripted_endpoint(*replies, force: bool = False):
    """The running ScriptedServer (when scripted runs are asked for), else None."""
    if not force and os.environ.get(SCRIPTED_ENV) != "1":
        return None
    from .server import ScriptedServer

    server = ScriptedServer(*replies).start()
    os.environ.update({"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "scripted",
                       "NBAGENT_MODEL": "scripted-model", "NBAGENT_LOCAL": "off"})
    return server
