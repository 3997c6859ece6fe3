"""Re-execute example notebooks to refresh their stored outputs, the way nbval will run them.

    .venv/bin/python notebooks/refresh.py [notebooks/quickstart.ipynb ...]

Executes each notebook with the scripted model switched on and, as nbval does, without storing the
cells in the kernel's history (so the kernel-context note %agent attaches is the one nbval sees), then
drops the stored widget state (large, and useless without the kernel that made it).
"""

import os
import sys
from pathlib import Path

import nbclient
import nbformat

from nbagent.testing.notebooks import scratch_workspace

HERE = Path(__file__).parent
SKIP = {"kernel_tools.ipynb"}  # refreshed by its own owner


class _LikeNbval(nbclient.NotebookClient):
    """nbval runs cells with store_history=False: In/Out and %tb see none of them."""

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        return await super().async_execute_cell(cell, cell_index, execution_count, store_history=False)


def refresh(path: Path) -> None:
    os.environ["NBAGENT_NOTEBOOKS_SCRIPTED"] = "1"  # the kernel inherits this environment
    for name in ("NBAGENT_VIEW", "NBAGENT_APPROVAL", "NBAGENT_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        os.environ.pop(name, None)
    scratch_workspace(HERE.parent)  # as nbval runs them: never in the checkout's own .nbagent/
    nb = nbformat.read(path, 4)
    _LikeNbval(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(p for p in HERE.glob("*.ipynb") if p.name not in SKIP)
    for p in paths:
        print("refreshing", p)
        refresh(p.resolve())
