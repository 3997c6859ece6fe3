"""Time to the first model request from a fresh process: a kernel's first %agent and the CLI, beside `import openai`.

    .venv/bin/python bench/coldstart.py [--repeat 3]

The scripted server notes when each model request arrives. Kernel: a fresh ipykernel runs
`%load_ext nbagent`, the user types the next cell while the background warm-up finishes, then a cell runs
`%agent hello`: the figure is from sending that cell to the request's arrival (goal: within 300 ms).
"right after %load_ext" runs the %agent cell at once (it then waits for the warm-up's imports). CLI: from starting
`nbagent run hello` to the request's arrival. Reference: a bare `import openai` in a fresh interpreter.
Medians of --repeat runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from nbagent.testing import Reply, ScriptedServer


class Clock:
    """Answers every request and notes when the first one came."""

    def __init__(self):
        self.first = threading.Event()
        self.at = 0.0

    def __call__(self, body):
        if not self.first.is_set():
            self.at = time.perf_counter()
            self.first.set()
        return Reply(text="hello")


def env_for(url: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-bench", "NBAGENT_MODEL": "scripted-model",
            "NBAGENT_LOCAL": "off", "NBAGENT_MEMORY": "0", "NBAGENT_PERSIST": "0"}


def bare_import() -> float:
    code = "import time; t = time.perf_counter(); import openai; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def cli(workdir: Path) -> float:
    clock = Clock()
    with ScriptedServer(responder=clock) as server:
        started = time.perf_counter()
        subprocess.run([str(Path(sys.executable).parent / "nbagent"), "run", "-q", "hello"], cwd=workdir,
                       env=env_for(server.url), capture_output=True, check=True, timeout=120)
        return clock.at - started


def kernel(workdir: Path, settled: bool) -> float:
    from jupyter_client.manager import start_new_kernel

    clock = Clock()
    with ScriptedServer(responder=clock) as server:
        km, kc = start_new_kernel(kernel_name="python3", cwd=str(workdir), env=env_for(server.url))
        try:
            kc.execute_interactive("%load_ext nbagent", timeout=60)
            if settled:  # the user typing the next cell while the warm-up finishes
                kc.execute_interactive("import nbagent.engine.warmup as _w\n_ = _w.wait(120)", timeout=130)
            started = time.perf_counter()
            kc.execute_interactive("%agent --wait hello", timeout=60, output_hook=lambda msg: None)
            if not clock.first.wait(30):
                raise RuntimeError("the kernel sent no model request")
            return clock.at - started
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = {
            "bare `import openai`": [bare_import() for _ in range(args.repeat)],
            "CLI: start -> first request": [cli(work) for _ in range(args.repeat)],
            "kernel: %agent cell -> first request (warm-up done)": [kernel(work, True) for _ in range(args.repeat)],
            "kernel: %agent cell -> first request (right after %load_ext)": [kernel(work, False)
                                                                             for _ in range(args.repeat)],
        }
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median of {args.repeat} fresh processes\n")
    for name, values in rows.items():
        print(f"{name:64} {statistics.median(values) * 1000:8.0f} ms")
    print("\ngoal: the kernel's first %agent sends its first request within 300 ms of the cell running")


if __name__ == "__main__":
    main()
