"""The test suite's time per tier: wall clock and CPU (this process's children: pytest, its xdist workers
and everything they started and waited for), the slowest tests, and the total against the goal.

    .venv/bin/python bench/test_tiers.py [--tiers unit,process,...] [--workers 2|0] [--durations 30]

Tiers are disjoint marker sets (tests/conftest.py and pyproject's markers), in the order scripts/test.sh
runs them; `--workers N` runs the tiers scripts/test.sh parallelises with `-n N --dist loadfile`
(0: serially, as before pytest-xdist). The machine may be shared: the CPU column does not depend on
how busy it is, the wall column does; `quiet` estimates the wall time on an idle machine of `--cores`
cores as max(wall spent waiting, CPU / min(cores, workers)), with the waiting part taken as wall minus
CPU over the share of the machine the run had (from the load average before and after).
Goal: the whole run (with pyright, TypeScript and the notebooks) under 12 min on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 12 * 60
SLOW = "process or kernel or server or browser or llama or integration"
TIERS = {  # name -> (marker expression, runs in parallel under scripts/test.sh)
    "unit": (f"not ({SLOW})", True),
    "process": ("(process or integration) and not (kernel or server or browser or llama)", True),
    "kernel": ("kernel and not (server or browser or llama)", True),
    "server": ("server and not (browser or llama)", True),
    "llama": ("llama and not browser", False),
    "browser": ("browser", False),
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_tier(name: str, workers: int, durations: int, cores: int) -> dict:
    expression, parallel = TIERS[name]
    argv = [str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:randomly", "-m", expression,
            f"--durations={durations}", "tests"]
    if parallel and workers:
        argv += ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]
    load_before, cpu_before, start = os.getloadavg()[0], _cpu(), time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.monotonic() - start, _cpu() - cpu_before
    load = max(1.0, (load_before + os.getloadavg()[0]) / 2)
    share = min(1.0, cores / load)  # of the machine's CPU this run could have had
    width = workers if parallel and workers else 1
    waiting = max(0.0, wall - cpu / (share * min(cores, width)))
    quiet = max(waiting, cpu / min(cores, width))
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    slowest = [line for line in done.stdout.splitlines() if re.match(r"^\d+\.\d+s (call|setup|teardown)", line)]
    collected = re.search(r"in ([\d.]+)s", summary)
    return {"name": name, "wall": wall, "cpu": cpu, "quiet": quiet, "load": load, "summary": summary,
            "slowest": slowest, "code": done.returncode, "reported": float(collected.group(1)) if collected else 0}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tiers", default=",".join(TIERS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--durations", type=int, default=30)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    results = []
    for name in args.tiers.split(","):
        result = run_tier(name, args.workers, args.durations, args.cores)
        results.append(result)
        print(f"{name:8} wall {result['wall']:7.1f} s  cpu {result['cpu']:7.1f} s  quiet~{result['quiet']:7.1f} s  "
              f"load {result['load']:4.1f}  exit {result['code']}  | {result['summary']}", flush=True)
    slowest = sorted((line for r in results for line in r["slowest"]), key=lambda s: -float(s.split("s ")[0]))
    print(f"\nslowest {args.durations} (setup, call or teardown):")
    for line in slowest[:args.durations]:
        print("  " + line)
    wall, cpu, quiet = (sum(r[k] for r in results) for k in ("wall", "cpu", "quiet"))
    print(f"\ntotal: wall {wall:.0f} s, cpu {cpu:.0f} s, quiet-machine estimate {quiet:.0f} s; goal < {GOAL_S} s "
          f"for all of scripts/test.sh: ratio {quiet / GOAL_S:.2f} (pytest only)")
    return max(r["code"] for r in results)


if __name__ == "__main__":
    sys.exit(main())
