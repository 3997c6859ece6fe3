"""One install: the sdist and the wheel build from the checkout, and the wheel alone gives a Jupyter user
the panel and the server extension, in a fresh virtual environment with no node on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]
ROOT = Path(__file__).resolve().parents[2]
JUPYTER_DEPENDENCIES = ("ipython", "ipykernel", "ipywidgets", "jupyterlab", "jupyter_server")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    if not (ROOT / "src/nbagent/jupyter/labextension/static/style.js").exists():
        pytest.fail("the panel is not built: run scripts/setup.sh (it builds labextension/)")
    out = tmp_path_factory.mktemp("dist")
    # The panel was built by setup: the build hook ships it as it is (what a release does after its
    # own `jlpm build:prod`), so building needs no node either.
    env = {**os.environ, "SKIP_JUPYTER_BUILDER": "1"}
    # No isolation: the build backend and its hook come from the test extra (an isolated build
    # installs JupyterLab into a throwaway environment twice, minutes on a loaded machine).
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_wheel_carries_the_panel_the_server_config_and_the_jupyter_dependencies(dist):
    (wheel,) = dist.glob("nbagent-*.whl")
    assert list(dist.glob("nbagent-*.tar.gz")), "no sdist was built"
    names = zipfile.ZipFile(wheel).namelist()
    data = "nbagent-0.1.0.data/data/"
    assert f"{data}share/jupyter/labextensions/nbagent-labextension/package.json" in names
    assert f"{data}share/jupyter/labextensions/nbagent-labextension/install.json" in names
    assert any(n.startswith(f"{data}share/jupyter/labextensions/nbagent-labextension/static/") for n in names)
    assert any(n.startswith(f"{data}etc/jupyter/jupyter_server_config.d/") for n in names)
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    required = [line.split(":", 1)[1].strip().lower().replace("-", "_") for line in metadata.splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    for name in JUPYTER_DEPENDENCIES:
        assert any(r.startswith(name) for r in required), f"{name} is not a dependency: {required}"


def test_a_fresh_environment_with_only_the_wheel_lists_both_extensions(dist, tmp_path):
    (wheel,) = dist.glob("nbagent-*.whl")
    fresh = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(fresh)  # this environment's pip installs into it (--python)
    python = fresh / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies come from this test environment (installing JupyterLab afresh takes a minute);
    # nbagent itself, its panel and its server config come only from the wheel, into the fresh prefix.
    (site / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              "--no-index", str(wheel)],
                             capture_output=True, text=True, timeout=180)
    assert install.returncode == 0, install.stderr
    env = {"PATH": str(fresh / "bin"), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}

    def run(*args: str) -> str:
        done = subprocess.run([str(python), *args], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    assert run("-c", "import shutil; print(shutil.which('node'))").strip() == "None"
    where = run("-c", "import nbagent; print(nbagent.__file__)")
    assert where.startswith(str(fresh)), where
    labext = run("-m", "jupyterlab.labextensions", "list")
    line = next(l for l in labext.splitlines() if "nbagent-labextension" in l)
    assert "enabled" in line and "OK" in line and str(fresh) in labext
    servext = run("-m", "jupyter_server.extension.serverextension", "list")
    line = next(l for l in servext.splitlines() if "nbagent.jupyter.server" in l)
    assert "enabled" in line
    validated = [l for l in servext.splitlines() if "nbagent.jupyter.server" in l and "OK" in l]
    assert validated, servext  # the extension imported and loaded its points in the fresh environment
