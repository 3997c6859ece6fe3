"""Live notebooks: time from the agent's edit call to the edit in the open notebook, with and without RTC.

    .venv/bin/python bench/live_notebook.py [--edits 20]

For each setup a real JupyterLab (jupyter-lab subprocess) opens a notebook in headless Chromium; the
agent's notebook_edit runs through the kernel's link to the server (what %agent in a kernel of that
server uses), and the page records when the new source reaches the open notebook's model (wall
clocks on one machine). Rows: median and 90th percentile per setup, beside the goal (200 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat

from nbagent.config import AgentConfig
from nbagent.jupyter.kernel.server_client import ServerNotebookStore
from nbagent.tools import notebook as nbt
from nbagent.tools.context import ToolContext
from nbagent.workspace.root import Workspace

GOAL_MS = 200.0
MODEL = "window.jupyterapp.shell.currentWidget.context.model.sharedModel"
SETUPS = {"jupyter-collaboration (live document)": [],
          "RTC disabled (through the open tab)": ["--YDocExtension.disable_rtc=True"]}
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(base: Path, extra: list[str]) -> tuple[subprocess.Popen, str]:
    settings = base / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port = free_port()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"), "JUPYTER_CONFIG_DIR": str(base / "config"),
           "JUPYTER_RUNTIME_DIR": str(base / "runtime")}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--allow-root",
                             "--ip", "127.0.0.1", f"--port={port}", "--IdentityProvider.token=bench",
                             f"--ServerApp.root_dir={base / 'root'}", "--expose-app-in-browser", *extra],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token=bench", timeout=2).close()
            return proc, url
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit("jupyter-lab did not start")
            time.sleep(0.3)


def measure(base: Path, extra: list[str], edits: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    root = base / "root"
    root.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Bench"), nbformat.v4.new_code_cell("x = 0")]
    nbformat.write(nb, root / "bench.ipynb")
    proc, url = start_lab(base, extra)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                        headless=True, args=BROWSER_ARGS)
            page = browser.new_page()
            page.goto(f"{url}/lab/tree/bench.ipynb?token=bench")
            page.wait_for_function(f"() => window.jupyterapp?.shell?.currentWidget?.context?.isReady && "
                                   f"{MODEL}.cells.length > 1", timeout=60_000)
            (info_file,) = (base / "runtime").glob("nbagent-server-*.json")
            info = json.loads(info_file.read_text())
            ctx = ToolContext(workspace=Workspace(root), config=AgentConfig.load(workspace=root),
                              emit=lambda event: None, processes=None)
            ctx.extras["notebook_stores"] = [ServerNotebookStore(info["url"], info["secret"], kernel_id=None)]
            deadline = time.monotonic() + 20
            while "read from the file" in nbt.notebook_read(ctx, "bench.ipynb"):  # the view is not known yet
                if time.monotonic() > deadline:
                    raise SystemExit(f"the open notebook never became the place edits go to ({extra})")
                time.sleep(0.1)
            return [one_edit(page, ctx, nb.cells[1].id, f"x = {n}") for n in range(1, edits + 1)]
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


def one_edit(page, ctx, cell_id: str, source: str) -> float:
    page.evaluate(f"""(target) => {{
        window.__seen = null;
        const m = {MODEL};
        const check = () => {{ if (!window.__seen && m.cells.some(c => c.source === target)) window.__seen = Date.now(); }};
        m.ydoc.on('afterTransaction', check);
        window.__stop = () => m.ydoc.off('afterTransaction', check);
    }}""", source)
    started = time.time() * 1000
    result = nbt.notebook_edit(ctx, "bench.ipynb", cell_id, source)
    if "written to" not in result:
        raise SystemExit(f"the edit did not go to the open notebook: {result}")
    seen = page.wait_for_function("() => window.__seen").json_value()
    page.evaluate("() => window.__stop()")
    return seen - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (setup, extra) in enumerate(SETUPS.items()):
            times = sorted(measure(Path(tmp) / str(i), extra, args.edits))
            p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
            rows.append((setup, statistics.median(times), p90))
    print(f"tool call -> edit in the open notebook ({args.edits} edits each; goal < {GOAL_MS:.0f} ms)")
    print(f"{'setup':42} {'median ms':>10} {'p90 ms':>8} {'goal ms':>8}")
    for setup, median, p90 in rows:
        print(f"{setup:42} {median:10.0f} {p90:8.0f} {GOAL_MS:8.0f}")


if __name__ == "__main__":
    main()
