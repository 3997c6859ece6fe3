"""nbval runs these notebooks with the scripted stand-in for the model (see nbagent.testing.notebooks),
so their outputs are the stored ones, in a scratch workspace (the checkout's .nbagent/ stays as it
was). The kernels nbval starts inherit this environment."""

import os
from pathlib import Path

from nbagent.testing.notebooks import scratch_workspace

os.environ["NBAGENT_NOTEBOOKS_SCRIPTED"] = "1"
for name in ("NBAGENT_VIEW", "NBAGENT_APPROVAL", "NBAGENT_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
    os.environ.pop(name, None)
scratch_workspace(Path(__file__).resolve().parents[1])
