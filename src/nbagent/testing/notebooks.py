"""Scripted answers for the example notebooks: fixed output when they are tested, your model otherwise.

``scripted_endpoint(*replies)`` does nothing unless NBAGENT_NOTEBOOKS_SCRIPTED=1 (set by
notebooks/conftest.py for nbval, and when the stored outputs are made). Then it starts the scripted
OpenAI-compatible server and points nbagent at it through the environment, so the notebook's %agent
cells (and any Agent made afterwards in that process) get these replies.

``scratch_workspace(checkout)``: where a tested notebook's agent works instead of the checkout (a copy
of what the scripted turns read), so testing never writes the checkout's own ``.nbagent/``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

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


def scratch_workspace(checkout: Path) -> Path:
    """A temporary copy of the checkout's README and notebooks, made the workspace of the notebooks'
    kernels (NBAGENT_WORKSPACE, which they inherit): their agents' sessions, traces and journals go
    there, never into the checkout's ``.nbagent/`` (nor into ``nbagent sessions list`` there)."""
    scratch = Path(tempfile.mkdtemp(prefix="nbagent-notebooks-"))
    shutil.copy2(checkout / "README.md", scratch / "README.md")
    shutil.copytree(checkout / "notebooks", scratch / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    os.environ["NBAGENT_WORKSPACE"] = str(scratch)
    return scratch

