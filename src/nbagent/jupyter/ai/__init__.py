"""nbagent as a persona in Jupyter AI's chat: jupyter-ai-acp-client starts ``nbagent acp`` and talks ACP to it.

Installed beside ``jupyter-ai`` (3) and ``jupyter-ai-acp-client``, the entry point ``nbagent-acp`` of the
``jupyter_ai.personas`` group puts "nbagent" in the chat's persona picker with no configuration. The
persona runs ``python -m nbagent.cli acp`` with the server's interpreter and environment, so nbagent's own
model configuration applies; the session's workspace is the chat's folder, where nbagent keeps its sessions
(``.nbagent/``) as it always does. Started by the server, it inherits the link to the server's nbagent
extension, so its notebook and kernel tools work on the server's live notebooks and kernels
(nbagent.acp.server_link). Without the ACP client (or its SDK) the entry point says so in the
server's log and the persona is left out, as Jupyter AI does for an agent whose command is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jupyter_ai_persona_manager import (  # pyright: ignore[reportMissingImports]  (Jupyter AI, optional)
    PersonaDefaults, PersonaRequirementsUnmet)

try:
    from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona  # pyright: ignore[reportMissingImports]
except ImportError as exc:  # the persona manager alone, or an SDK the client cannot import
    raise PersonaRequirementsUnmet(f"the nbagent persona needs jupyter-ai-acp-client: {exc}") from None

AVATAR = Path(__file__).with_name("nbagent.svg")


class NbagentAcpPersona(BaseAcpPersona):
    """The "nbagent" persona: an ACP session of ``nbagent acp`` per chat."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, executable=[sys.executable, "-m", "nbagent.cli", "acp"], **kwargs)
        # The client's first-message note steers agents to the Jupyter MCP server's cell tools; nbagent's own
        # notebook tools edit by cell id already, and its system prompt says how.
        self._notebook_guidance_sent = True

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(name="nbagent", avatar_path=str(AVATAR), system_prompt="unused",
                               description="nbagent: a coding agent that knows notebooks, kernels and the "
                                           "workspace, with its own model configuration and sessions.")
