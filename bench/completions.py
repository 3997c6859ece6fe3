"""Inline completions: what nbagent adds to a completion's latency, and how few requests typing makes.

    .venv/bin/python bench/completions.py [--samples 12] [--keys 100] [--key-ms 150]

A real JupyterLab (jupyter-lab subprocess, this checkout's build of the extension) opens a notebook
whose kernel holds a DataFrame, in headless Chromium; the model is a scripted OpenAI-compatible server
on this machine that answers at once. Clocks: the page's (performance.timeOrigin + now) and the
model server's (time.time()), both the machine's wall clock. Figures, medians:

- keystroke to request: from the provider's debounce running out in the page (its
  "nbagent-complete:debounced" mark: the keystroke plus the debounce) to the model request reaching
  the scripted server. Covered: the browser's fetch, the Jupyter server's handler (the notebook's
  cells, the kernel's names from their two-second cache, the prompt), the openai client's send. Goal:
  at most 15 ms.
- first token to ghost text: from the scripted server writing the first chunk to the ghost text in
  the page's DOM (a MutationObserver on .jp-GhostText; the paint after it is not counted). Covered:
  the openai client's parse, the handler's write, the browser's read of the stream, JupyterLab's
  inline completer. Goal: at most 15 ms.
- requests per 100 keystrokes: POSTs to /nbagent/api/complete while typing 100 characters at a steady
  ``--key-ms`` (150 ms, about 80 words a minute) with the default 250 ms debounce. Goal: at most 10.

``guard()`` runs the same with fewer samples, for bench/guard.py (about 40-60 s, most of it JupyterLab
starting).
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

from nbagent.testing import Reply, ScriptedServer

GOAL_MS = 15.0
GOAL_REQUESTS = 10.0
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage"]
CELL = ".jp-NotebookPanel .jp-Cell .cm-content"
WATCH_GHOST = """(want) => {
    window.__ghost = null;
    window.__want = want;
    if (window.__ghostObserver) return;
    window.__ghostObserver = new MutationObserver(() => {
        const ghost = document.querySelector('.jp-GhostText');
        if (window.__ghost === null && ghost && ghost.textContent.includes(window.__want))
            window.__ghost = performance.timeOrigin + performance.now();
    });
    window.__ghostObserver.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
DEBOUNCED = """() => {
    const [mark] = performance.getEntriesByName('nbagent-complete:debounced');
    return mark ? performance.timeOrigin + mark.startTime : null;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def this_checkouts_build(data: Path) -> Path:
    """A Jupyter data dir whose labextensions/ holds this checkout's build (labextension/, jlpm build:prod)."""
    import nbagent

    built = Path(nbagent.__file__).parent / "jupyter" / "labextension"
    if not (built / "package.json").exists():
        raise SystemExit(f"the labextension is not built: cd labextension && jlpm build:prod (no {built})")
    (data / "labextensions").mkdir(parents=True)
    (data / "labextensions" / "nbagent-labextension").symlink_to(built, target_is_directory=True)
    return data


def start_lab(base: Path, model_url: str) -> tuple[subprocess.Popen, str]:
    settings = base / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    data = this_checkouts_build(base / "data")
    port = free_port()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"), "JUPYTER_CONFIG_DIR": str(base / "config"),
           "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
           "JUPYTER_PATH": os.pathsep.join(filter(None, [str(data), os.environ.get("JUPYTER_PATH")])),
           "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "sk-bench", "NBAGENT_MODEL": "scripted-model",
           "NBAGENT_LOCAL": "off", "NBAGENT_MAX_RETRIES": "0", "NBAGENT_TELEMETRY": "0"}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--allow-root",
                             "--ip", "127.0.0.1", f"--port={port}", "--IdentityProvider.token=bench",
                             f"--ServerApp.root_dir={base / 'root'}"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=base)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token=bench", timeout=2).close()
            return proc, url
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit("jupyter-lab did not start")
            time.sleep(0.3)


def write_notebook(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "sales.csv").write_text("region,revenue_eur_2024,units\nnorth,1.5,3\nsouth,2.0,4\n")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import pandas as pd\nsales = pd.read_csv('sales.csv')"),
        nbformat.v4.new_code_cell(""), nbformat.v4.new_code_cell("")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "bench.ipynb")


def open_notebook(page, url: str) -> None:
    page.goto(f"{url}/lab/tree/bench.ipynb?token=bench")
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=90_000)
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=60_000)
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    if accept.count():
        accept.first.click()
    page.locator(".jp-StatusBar-Widget", has_text="Idle").first.wait_for(timeout=60_000)
    page.locator(CELL).nth(0).click()
    page.keyboard.press("Shift+Enter")  # the kernel reads the DataFrame
    page.locator(".jp-Cell .jp-InputPrompt", has_text="[1]").first.wait_for(timeout=60_000)


def latency_samples(page, server: ScriptedServer, samples: int) -> tuple[list[float], list[float]]:
    """(keystroke after the debounce -> request at the model, first chunk written -> ghost text), in ms."""
    to_request, to_ghost = [], []
    page.locator(CELL).nth(1).click()
    page.keyboard.type("sales.", delay=30)
    page.wait_for_timeout(600)
    for n in range(samples + 1):  # the first one warms the names' cache and the connections: not counted
        letter = "abcdefghijklmnopqrstuvwxyz"[n % 26]
        page.evaluate(WATCH_GHOST, "_" + letter * 3)  # the answer to this keystroke, not the last one's
        before = len(server.model_requests())
        page.keyboard.type(letter)
        page.wait_for_function("() => window.__ghost !== null", timeout=15_000)
        ghost = page.evaluate("() => window.__ghost")
        debounced = page.evaluate(DEBOUNCED)
        requests = server.model_requests()[before:]
        if n == 0 or not requests or debounced is None or requests[-1].first_sent is None:
            continue
        to_request.append(requests[-1].at * 1000 - debounced)
        to_ghost.append(ghost - requests[-1].first_sent * 1000)
    return to_request, to_ghost


def requests_while_typing(page, keys: int, key_ms: int) -> int:
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "nbagent/api/complete" in r.url else None)
    page.locator(CELL).nth(2).click()
    page.wait_for_timeout(400)
    sent.clear()
    text = ("total = sales['units'] * 2 + sales['revenue_eur_2024'].sum() / len(sales) - 1 " * 3)[:keys]
    page.keyboard.type(text, delay=key_ms)
    page.wait_for_timeout(600)  # the last keystroke's debounce runs out: that request counts
    return len(sent)


def echo_last_letter(body: dict) -> Reply:
    """The scripted model's answer: "_" and the letter before the cursor three times, so that the page
    can tell this keystroke's ghost text from the one before."""
    before = body["messages"][-1]["content"].split("<CURSOR>")[0]
    return Reply("_" + before[-1:] * 3)


def measure(samples: int, keys: int, key_ms: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(chunk_size=4, responder=echo_last_letter) \
            as server:
        base = Path(tmp)
        write_notebook(base / "root")
        proc, url = start_lab(base, server.url)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                            headless=True, args=BROWSER_ARGS)
                page = browser.new_page(viewport={"width": 1200, "height": 800})
                page.set_default_timeout(30_000)
                open_notebook(page, url)
                to_request, to_ghost = latency_samples(page, server, samples)
                per_100 = requests_while_typing(page, keys, key_ms) * 100 / keys
                browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    if not to_request:
        raise SystemExit("no completion was measured")
    return {"to_request": statistics.median(to_request), "to_ghost": statistics.median(to_ghost),
            "per_100": per_100, "samples": len(to_request), "load": os.getloadavg()[0]}


def figures(result: dict[str, float]) -> list[tuple[str, float, str, bool]]:
    return [
        ("completion: keystroke (after debounce) -> request, ms", result["to_request"], f"<= {GOAL_MS:.0f} ms",
         result["to_request"] <= GOAL_MS),
        ("completion: first token -> ghost text, ms", result["to_ghost"], f"<= {GOAL_MS:.0f} ms",
         result["to_ghost"] <= GOAL_MS),
        ("completion: requests per 100 keystrokes", result["per_100"], f"<= {GOAL_REQUESTS:.0f}",
         result["per_100"] <= GOAL_REQUESTS),
    ]


def guard() -> list[tuple[str, float, str, bool]]:
    """For bench/guard.py: (name, value, goal, ok) rows, in about a minute."""
    return figures(measure(samples=6, keys=60, key_ms=150))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=12)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--key-ms", type=int, default=150)
    args = parser.parse_args()
    result = measure(args.samples, args.keys, args.key_ms)
    print(f"inline completions, JupyterLab in headless Chromium, a scripted model answering at once "
          f"({result['samples']:.0f} samples; {args.keys} keys at {args.key_ms} ms; "
          f"load average {result['load']:.1f} on {os.cpu_count()} cores)")
    print(f"{'figure':56} {'median':>8} {'goal':>8} {'ratio':>7}")
    for name, value, goal, ok in figures(result):
        target = GOAL_REQUESTS if "requests" in name else GOAL_MS
        print(f"{name:56} {value:8.1f} {goal:>8} {value / target:7.2f}  {'ok' if ok else 'MISS'}")


if __name__ == "__main__":
    main()
