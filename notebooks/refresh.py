"""Re-execute example notebooks to refresh their stored outputs, the way nbval will run them.

    .venv/bin/python notebooks/refresh.py [notebooks/quickstart.ipynb ...]

Runs `jupyter nbconvert --execute --inplace` with the scripted model switched on, then drops the
stored widget state (large, and useless without the kernel that made it).
"""

import os
import subprocess
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).parent
SKIP = {"kernel_tools.ipynb"}  # refreshed by its own owner


def refresh(path: Path) -> None:
    env = {**os.environ, "NBAGENT_NOTEBOOKS_SCRIPTED": "1"}
    for name in ("NBAGENT_VIEW", "NBAGENT_APPROVAL", "NBAGENT_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                    "--ExecutePreprocessor.timeout=120", str(path)], check=True, env=env, cwd=path.parent)
    nb = nbformat.read(path, 4)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(p for p in HERE.glob("*.ipynb") if p.name not in SKIP)
    for p in paths:
        print("refreshing", p)
        refresh(p.resolve())
