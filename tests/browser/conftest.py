"""JupyterLab with the nbagent panel in headless Chromium, its model a scripted HTTP server.

One JupyterLab (``jupyter-lab`` subprocess) and one browser page per module; the tests of a
module run in order on the same page. Screenshots go to test-artifacts/browser/.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from nbagent.testing import ScriptedServer
from tests.paths import CHECKOUT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = CHECKOUT / "test-artifacts" / "browser"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def model_server():
    with ScriptedServer(chunk_size=6) as server:
        yield server


@pytest.fixture(scope="module")
def lab_args():
    """More jupyter-lab arguments; a module overrides this (e.g. to disable collaboration)."""
    return []


@pytest.fixture(scope="module")
def lab_env(model_server):
    """The model settings of the JupyterLab; a module overrides this (e.g. the offline model)."""
    return {"OPENAI_BASE_URL": model_server.url, "OPENAI_API_KEY": "sk-test", "NBAGENT_MODEL": "scripted-model",
            "NBAGENT_LOCAL": "off"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory, lab_env, lab_args):
    """A running JupyterLab: ``lab.url``, ``lab.token``, ``lab.root`` (the agent's workspace),
    ``lab.runtime`` (its Jupyter runtime directory)."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: apt-get install -y chromium (scripts/setup.sh does it)")
    base = tmp_path_factory.mktemp("lab")
    root, settings = base / "root", base / "settings"
    root.mkdir()
    notifications = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notifications.parent.mkdir(parents=True)
    notifications.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = _free_port(), "nbagent-browser-test"
    data = _this_checkouts_labextension(base / "data")
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTER_CONFIG_DIR": str(base / "config"),
           "JUPYTER_PATH": os.pathsep.join(filter(None, [str(data), os.environ.get("JUPYTER_PATH")])),
           "JUPYTER_RUNTIME_DIR": str(base / "runtime"), "NBAGENT_MAX_RETRIES": "0",
           # Written against "ask" (the server outlives the per-test environment of tests/conftest.py)
           "NBAGENT_APPROVAL": "ask",
           # Off: typing in a cell would ask the scripted model for ghost text and take the replies a test
           # queued for its turn (tests/browser/test_inline_completions.py turns them on in its lab_env)
           "NBAGENT_COMPLETIONS": "off", **lab_env}
    log = open(base / "jupyter.log", "w")
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--allow-root", "--ip", "127.0.0.1",
         f"--port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", *lab_args],
        env=env, stdout=log, stderr=subprocess.STDOUT,
        cwd=base,  # what the server writes beside itself (the collaboration's .jupyter_ystore.db) stays here
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{url}/api/status?token={token}", proc, base / "jupyter.log")
        yield _Lab(url=url, token=token, root=root, log=base / "jupyter.log", runtime=base / "runtime",
                   started=started)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _this_checkouts_labextension(data: Path) -> Path:
    """A Jupyter data dir whose labextensions/ holds this checkout's build of the panel (labextension/,
    ``jlpm build:prod``), so that the tests exercise the TypeScript beside them and not whichever build the
    virtualenv's share/ holds (JupyterLab takes the first extension of a name along JUPYTER_PATH)."""
    import nbagent

    built = Path(nbagent.__file__).parent / "jupyter" / "labextension"
    if not (built / "package.json").exists():
        pytest.fail(f"the labextension is not built: cd labextension && jlpm build:prod (no {built})")
    (data / "labextensions").mkdir(parents=True)
    (data / "labextensions" / "nbagent-labextension").symlink_to(built, target_is_directory=True)
    return data


class _Lab:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _wait_for(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter-lab exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"jupyter-lab did not start in {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def page(lab, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium")), executable_path=CHROMIUM, headless=True,
            args=BROWSER_ARGS, viewport={"width": 1400, "height": 900},
        )
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{lab.url}/lab?token={lab.token}")
        page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
        page.locator(".jp-LauncherCard").first.wait_for(timeout=60_000)  # the shell is restored
        yield page
        context.close()


@pytest.fixture
def shot(page):
    """``shot("name")`` saves test-artifacts/browser/name.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    return take


@pytest.fixture
def axe(page):
    """``axe(selector, state)``: axe-core (the axe.min.js of axe-playwright-python) over the elements
    ``selector`` matches; fails, naming rule, impact and elements, on any serious or critical violation.
    Returns every violation found (the minor and moderate ones too)."""
    from axe_playwright_python.sync_playwright import Axe

    engine = Axe()

    def check(selector: str, state: str) -> list[dict]:
        assert page.locator(selector).count(), f"{state}: nothing matches {selector}"
        found = engine.run(page, context={"include": [[selector]]}).response["violations"]
        bad = [v for v in found if v["impact"] in ("serious", "critical")]
        assert not bad, f"{state}: " + "; ".join(
            f"{v['id']} ({v['impact']}): {v['help']} at " + ", ".join(str(n["target"]) for n in v["nodes"][:4])
            for v in bad)
        return found

    return check
