"""nbval runs these notebooks with the scripted stand-in for the model (see nbagent.testing.notebooks),
so their outputs are the stored ones. The kernels nbval starts inherit this environment."""

import os

os.environ["NBAGENT_NOTEBOOKS_SCRIPTED"] = "1"
for name in ("NBAGENT_VIEW", "NBAGENT_APPROVAL", "NBAGENT_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
    os.environ.pop(name, None)
