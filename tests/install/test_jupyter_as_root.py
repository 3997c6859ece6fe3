"""The README's `.venv/bin/jupyter lab` works as written after `scripts/setup.sh` run as root (issue 40,
item 1): the set-up puts a config into the environment's etc/jupyter that allows root for root only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from tests.paths import CHECKOUT

pytestmark = pytest.mark.integration


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scratch_venv(folder: Path) -> Path:
    """A virtual environment of its own prefix (so its own etc/jupyter, empty at first) that imports
    this one's packages: the test's .venv already has the set-up's config, a fresh one has not."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next((folder / "lib").glob("python3*/site-packages"))
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    # addsitedir, not a bare path: the .pth files there (the editable install's) count too
    (site / "this_checkouts_packages.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in ours))
    return folder


def start_lab(tmp_path: Path, venv: Path) -> tuple[subprocess.Popen, int]:
    """`jupyter lab` as the README runs it (no --allow-root), from the environment ``venv``."""
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_CONFIG_PATH", "JUPYTER_CONFIG_DIR")}
    port = _port()
    proc = subprocess.Popen([str(venv / "bin" / "python"), "-m", "jupyterlab", "--no-browser", "--ip", "127.0.0.1",
                             f"--port={port}", "--IdentityProvider.token=t", f"--ServerApp.root_dir={tmp_path}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    return proc, port


def answers(proc: subprocess.Popen, port: int, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token=t", timeout=2) as r:
                return json.loads(r.read()) is not None
        except OSError:
            time.sleep(0.3)
    return False


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.stdout.read() if proc.stdout else ""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the set-up as root: CI runs as root")
def test_jupyter_lab_starts_as_root_after_the_setup_and_not_without_its_config(tmp_path):
    venv = scratch_venv(tmp_path / "venv")  # where setup.sh's step installs it (its .venv), here a scratch one
    refused, _ = start_lab(tmp_path, venv)
    refused.wait(60)
    assert "Running as root is not recommended" in stop(refused)  # what the README's user saw before

    subprocess.run(["bash", str(CHECKOUT / "scripts" / "install_jupyter_config.sh"), str(venv)], check=True)
    installed = venv / "etc" / "jupyter" / "jupyter_server_config.py"
    assert installed.read_text() == (CHECKOUT / "scripts" / "jupyter_server_config.py").read_text()
    assert "install_jupyter_config.sh .venv" in (CHECKOUT / "scripts" / "setup.sh").read_text()
    lab, port = start_lab(tmp_path, venv)
    try:
        assert answers(lab, port), "jupyter lab did not start as root with the set-up's config"
    finally:
        stop(lab)
