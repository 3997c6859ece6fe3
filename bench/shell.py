"""Shell figures: the bash tool's cost per call against a bare subprocess, and how long Stop takes.

Run: .venv/bin/python bench/shell.py   (prints medians and their ratio, measured in one run)
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from nbagent.config import AgentConfig  # noqa: E402
from nbagent.workspace.procs import ProcessTracker  # noqa: E402
from nbagent.tools.context import ToolContext  # noqa: E402
from nbagent.tools.shell import bash  # noqa: E402
from nbagent.workspace.root import Workspace  # noqa: E402

RUNS = 40
STUBBORN = "for i in 1 2 3; do (trap '' TERM; exec sleep 300) & done; sleep 300; true"


def bare(command: str, cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(["bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
    return time.perf_counter() - started


async def tool(ctx: ToolContext, command: str) -> float:
    started = time.perf_counter()
    await bash(ctx, command)
    return time.perf_counter() - started


async def stop_latency(ctx: ToolContext, command: str) -> float:
    call = asyncio.create_task(bash(ctx, command))
    while not ctx.processes.running:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.2)  # let the children start
    started = time.perf_counter()
    await asyncio.to_thread(ctx.processes.kill_all)
    try:
        await call
    except Exception:
        pass
    return time.perf_counter() - started


async def main() -> None:
    root = tempfile.mkdtemp()
    ctx = ToolContext(workspace=Workspace(root), config=AgentConfig.load(workspace=root), emit=lambda e: None,
                      processes=ProcessTracker())
    command = "echo hello; ls / > /dev/null"
    plain = statistics.median(bare(command, root) for _ in range(RUNS))
    ours = statistics.median([await tool(ctx, command) for _ in range(RUNS)])
    print(f"bash call, median of {RUNS}: bash tool {ours * 1000:.1f} ms, bare subprocess.run {plain * 1000:.1f} ms,"
          f" ratio {ours / plain:.2f}x")
    polite = statistics.median([await stop_latency(ctx, "sleep 300; true") for _ in range(5)])
    stubborn = statistics.median([await stop_latency(ctx, STUBBORN) for _ in range(5)])
    print(f"Stop to CommandKilled, median of 5: plain tree {polite * 1000:.0f} ms, "
          f"tree whose children ignore TERM {stubborn * 1000:.0f} ms (grace 750 ms)")


if __name__ == "__main__":
    assert threading.current_thread() is threading.main_thread()
    asyncio.run(main())
