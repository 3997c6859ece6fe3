"""One install: the sdist and the wheel build from the checkout, and the wheel alone gives a Jupyter user
the panel and the server extension, in a fresh virtual environment with no node on PATH: listed,
and the panel answering a prompt in JupyterLab run from that environment (headless Chromium)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest
from tests.paths import CHECKOUT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]
ROOT = CHECKOUT
ARTIFACTS = ROOT / "test-artifacts" / "browser"
JUPYTER_DEPENDENCIES = ("ipython", "ipykernel", "ipywidgets", "jupyterlab", "jupyter_server")
VERSION = __import__("tomllib").loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    if not (ROOT / "src/nbagent/jupyter/labextension/static/style.js").exists():
        pytest.fail("the panel is not built: run scripts/setup.sh (it builds labextension/)")
    out = tmp_path_factory.mktemp("dist")
    # The panel was built by setup: the build hook ships it as it is (what a release does after its
    # own `jlpm build:prod`), so building needs no node either.
    env = {**os.environ, "SKIP_JUPYTER_BUILDER": "1"}
    # No isolation: the build backend and its hook come from the test extra (an isolated build
    # installs JupyterLab into a throwaway environment twice, minutes on a loaded machine). No check of
    # the build requirements' own requirements either: scripts/setup.sh leaves out one that only slows
    # every import of nbformat (rfc3987-syntax), and the build needs none of them.
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check",
                           "--outdir", str(out), str(ROOT)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_wheel_carries_the_panel_the_server_config_and_the_jupyter_dependencies(dist):
    (wheel,) = dist.glob("jupyter_nbagent-*.whl")
    assert list(dist.glob("jupyter_nbagent-*.tar.gz")), "no sdist was built"
    names = zipfile.ZipFile(wheel).namelist()
    data = f"jupyter_nbagent-{VERSION}.data/data/"
    assert f"{data}share/jupyter/labextensions/nbagent-labextension/package.json" in names
    assert f"{data}share/jupyter/labextensions/nbagent-labextension/install.json" in names
    assert any(n.startswith(f"{data}share/jupyter/labextensions/nbagent-labextension/static/") for n in names)
    assert any(n.startswith(f"{data}etc/jupyter/jupyter_server_config.d/") for n in names)
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    # "nbagent" on the package index is an unrelated project: the distribution is jupyter-nbagent.
    assert "\nName: jupyter-nbagent\n" in metadata and f"\nVersion: {VERSION}\n" in metadata
    required = [line.split(":", 1)[1].strip().lower().replace("-", "_") for line in metadata.splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    for name in JUPYTER_DEPENDENCIES:
        assert any(r.startswith(name) for r in required), f"{name} is not a dependency: {required}"


class Fresh:
    """A fresh virtual environment holding only the wheel (its dependencies seen through a .pth)."""

    def __init__(self, prefix: Path, home: Path):
        self.prefix, self.python = prefix, prefix / "bin" / "python"
        self.env = {"PATH": str(prefix / "bin"), "HOME": str(home), "LANG": "C.UTF-8"}

    def run(self, *args: str) -> str:
        done = subprocess.run([str(self.python), *args], env=self.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    def command(self, *args: str) -> str:
        """The ``nbagent`` console script the wheel installed into the fresh environment."""
        done = subprocess.run([str(self.prefix / "bin" / "nbagent"), *args], env=self.env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def fresh(dist, tmp_path_factory) -> Fresh:
    (wheel,) = dist.glob("jupyter_nbagent-*.whl")
    base = tmp_path_factory.mktemp("fresh")
    prefix = base / "venv"
    venv.EnvBuilder(with_pip=False).create(prefix)  # this environment's pip installs into it (--python)
    python = prefix / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies come from this test environment (installing JupyterLab afresh takes a minute);
    # nbagent itself, its panel and its server config come only from the wheel, into the fresh prefix.
    (site / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              "--no-index", str(wheel)],
                             capture_output=True, text=True, timeout=180)
    assert install.returncode == 0, install.stderr
    (base / "home").mkdir()
    return Fresh(prefix, base / "home")


def test_a_fresh_environment_with_only_the_wheel_lists_both_extensions(fresh):
    assert fresh.run("-c", "import shutil; print(shutil.which('node'))").strip() == "None"
    where = fresh.run("-c", "import nbagent; print(nbagent.__file__)")
    assert where.startswith(str(fresh.prefix)), where
    labext = fresh.run("-m", "jupyterlab.labextensions", "list")
    line = next(l for l in labext.splitlines() if "nbagent-labextension" in l)
    assert "enabled" in line and "OK" in line and str(fresh.prefix) in labext
    servext = fresh.run("-m", "jupyter_server.extension.serverextension", "list")
    line = next(l for l in servext.splitlines() if "nbagent.jupyter.server" in l)
    assert "enabled" in line
    validated = [l for l in servext.splitlines() if "nbagent.jupyter.server" in l and "OK" in l]
    assert validated, servext  # the extension imported and loaded its points in the fresh environment


def test_the_fresh_environment_has_the_command_the_magics_and_the_version(fresh):
    assert fresh.command("--version").strip().splitlines()[0] == f"nbagent {VERSION} (jupyter-nbagent)"
    assert "offline model" in fresh.command("--help")
    assert fresh.run("-c", "import nbagent; print(nbagent.__version__)").strip() == VERSION
    loaded = fresh.run("-c", "from IPython.core.interactiveshell import InteractiveShell\n"
                             "shell = InteractiveShell.instance()\n"
                             "assert shell.run_line_magic('load_ext', 'nbagent') is None\n"
                             "print(sorted(shell.magics_manager.magics['line']).count('agent'))\n"
                             "import nbagent.jupyter.kernel.magics as m; print(m.__file__)")
    count, where = loaded.split()[-2:]
    assert count == "1" and where.startswith(str(fresh.prefix)), loaded


@pytest.mark.browser
def test_the_panel_of_the_installed_wheel_answers_a_prompt_in_jupyterlab(fresh, tmp_path):
    """JupyterLab run by the fresh environment's Python: the panel and the server extension it loads
    are the wheel's, and the panel answers a prompt from the scripted model."""
    from playwright.sync_api import sync_playwright

    from nbagent.testing import Reply, ScriptedServer

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.fail("Chromium is missing: apt-get install -y chromium (scripts/setup.sh does it)")
    root, settings = tmp_path / "root", tmp_path / "settings"
    root.mkdir()
    quiet = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    quiet.parent.mkdir(parents=True)
    quiet.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "nbagent-wheel-test"
    with ScriptedServer() as model:
        model.enqueue(Reply(text="Hello from the **installed** wheel."))
        # A user's machine has git (the agent's repository tools use it) but, here, no node: git is
        # linked into a folder of its own, since node sits beside it in /usr/bin.
        tools = tmp_path / "tools"
        tools.mkdir()
        (tools / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
        env = {**fresh.env, "PATH": f"{fresh.env['PATH']}{os.pathsep}{tools}", "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
               "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
               # JupyterLab's own page assets, which `pip install jupyterlab` puts under the prefix; the
               # fresh prefix sees the package through the .pth but not its data files.
               "JUPYTERLAB_DIR": str(Path(sys.prefix) / "share" / "jupyter" / "lab"),
               "OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "sk-test", "NBAGENT_MODEL": "scripted-model",
               "NBAGENT_LOCAL": "off", "NBAGENT_MAX_RETRIES": "0"}
        assert shutil.which("node", path=env["PATH"]) is None
        log_path = tmp_path / "jupyter.log"
        with open(log_path, "w") as log:
            lab = subprocess.Popen([str(fresh.python), "-m", "jupyterlab", "--no-browser", "--allow-root",
                                    "--ip", "127.0.0.1",
                                    f"--port={port}", f"--IdentityProvider.token={token}",
                                    f"--ServerApp.root_dir={root}"],
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                url = f"http://127.0.0.1:{port}"
                _wait_until_up(f"{url}/api/status?token={token}", lab, log_path)
                with sync_playwright() as p:
                    context = p.chromium.launch_persistent_context(
                        str(tmp_path / "chromium"), executable_path=chromium, headless=True,
                        args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                              "--disable-background-networking", "--disable-component-update", "--disable-sync",
                              "--disable-dev-shm-usage"])
                    try:
                        page = context.new_page()
                        page.set_default_timeout(30_000)
                        page.goto(f"{url}/lab?token={token}")
                        page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
                        page.click("li[data-id='nbagent-panel']")
                        box = page.locator(".jp-nbagent .jp-nbagent-input textarea")
                        box.fill("Who is there?")
                        box.press("Enter")
                        page.locator(".jp-nbagent .jp-nbagent-assistant strong", has_text="installed").wait_for()
                    finally:
                        ARTIFACTS.mkdir(parents=True, exist_ok=True)
                        page.screenshot(path=str(ARTIFACTS / "wheel-install-panel.png"))
                        context.close()
            finally:
                lab.terminate()
                try:
                    lab.wait(10)
                except subprocess.TimeoutExpired:
                    lab.kill()
        model.assert_complete()
    text = log_path.read_text()
    assert "nbagent.jupyter.server | extension was successfully loaded" in text, text[-2000:]
    assert str(fresh.prefix) in fresh.run("-c", "import nbagent.jupyter.server as s; print(s.__file__)")


def _wait_until_up(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"jupyterlab exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"jupyterlab did not start in {timeout} s:\n{log.read_text()[-3000:]}")
