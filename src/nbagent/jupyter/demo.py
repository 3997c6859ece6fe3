"""Scripted answers for the example notebooks: fixed output when they are tested, your model otherwise.

``scripted_endpoint(*replies)`` does nothing unless NBAGENT_NOTEBOOKS_SCRIPTED=1 (set by
notebooks/conftest.py for nbval, and when the stored outputs are made). Then it starts the scripted
OpenAI-compatible server and points %agent at it, so the notebook's %agent cells get these replies.
"""

from __future__ import annotations

import os

SCRIPTED_ENV = "NBAGENT_NOTEBOOKS_SCRIPTED"


def scripted_endpoint(*replies, shell=None, force: bool = False):
    """The running ScriptedServer (when scripted runs are asked for), else None."""
    if not force and os.environ.get(SCRIPTED_ENV) != "1":
        return None
    from ..testing.server import ScriptedServer

    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    server = ScriptedServer(*replies).start()
    settings = {"base_url": server.url, "api_key": "scripted", "model": "scripted-model", "local": "off"}
    for name, value in settings.items():
        setattr(shell.config.NbAgent, name, value)
    return server
