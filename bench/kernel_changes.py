"""Kernel state: the time the namespace record adds to a kernel call, and notebook_check against plain nbclient.

    .venv/bin/python bench/kernel_changes.py [--sizes 10MB,1GB,4GB] [--repeat 7] [--check-repeat 5]

Part 1, the record (nbagent.checkpoints.kernel_ledger): a namespace of pandas DataFrames of about the
given total size (100 MB frames of ten float64 columns, one of them with a string column, plus 200 small
values: lists, dicts, arrays, functions), and around each call the ledger's ``before()`` and ``after()``
(identity of every name, the fingerprints; the call itself changes one small list). The figure is
their added time per call, the median of --repeat calls (wall clock, and this process's CPU time: on
a shared machine the wall clock also counts waiting for a core), beside the goal (50 ms) as a ratio,
and how many names the time budget (15 ms a snapshot) left "not checked" in that call. The
machine has 24 GB and 2 shared cores: a size that does not fit in the free memory (with 2 GB to
spare) is skipped and said so.

Part 2, notebook_check (nbagent.tools.nbcheck.check_notebook) against a plain nbclient run of the same
20-cell notebook (each a little pandas work), both starting and stopping a fresh python3 kernel,
interleaved (each goes first every other time), median of --check-repeat runs each; goal: at most 1.1x.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import psutil

from nbagent.checkpoints.kernel_ledger import KernelLedger
from nbagent.tools.kernel import KernelBridge

GOAL_MS = 50.0
FRAME_BYTES = 100 * 1024 ** 2
SPARE = 2 * 1024 ** 3


def parse_size(text: str) -> int:
    units = {"KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
    return int(float(text[:-2]) * units[text[-2:].upper()])


def namespace_of(total: int) -> dict:
    """DataFrames adding up to ``total`` bytes (100 MB each at most), plus 200 small values."""
    ns: dict = {}
    left, index = total, 0
    while left > 0:
        size = min(FRAME_BYTES, left)
        rows = max(1, size // (10 * 8))
        ns[f"df{index}"] = pd.DataFrame({f"c{i}": np.full(rows, float(i)) for i in range(10)})
        left -= size
        index += 1
    ns["df0"]["label"] = pd.Series(["row"] * len(ns["df0"]), dtype=object)  # object columns hash slowest
    for i in range(50):
        ns[f"items{i}"] = list(range(100))
        ns[f"table{i}"] = {str(k): k for k in range(50)}
        ns[f"arr{i}"] = np.arange(1000.0)
        ns[f"fn{i}"] = (lambda i=i: i)
    return ns


def added_ms(ns: dict, repeat: int) -> tuple[float, float, int, int]:
    """Median wall and CPU ms of before() + after() around a call that appends to one list; the names,
    and how many the budget left unchecked in the median call."""
    ledger = KernelLedger(KernelBridge(ns), max_bytes=1 << 40)
    runs = []
    for turn in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        snap = ledger.before()
        ns["items0"].append(turn)  # the call
        record, _ = ledger.after(snap, turn, f"t{turn}", f"c{turn}")
        runs.append(((time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000,
                     len(record.unchecked) if record else 0))
    runs.sort()
    wall, cpu, unchecked = runs[len(runs) // 2]
    return wall, cpu, len(ns), unchecked


def part_one(sizes: list[str], repeat: int) -> None:
    print("the record's added time per kernel call (before + after), median of", repeat, "calls;",
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'namespace':>10} {'frames':>7} {'names':>6} {'added ms':>9} {'cpu ms':>7} {'goal ms':>8} {'ratio':>6} "
          "unchecked")
    for label in sizes:
        total = parse_size(label)
        free = psutil.virtual_memory().available
        if total + SPARE > free:
            print(f"{label:>10}  skipped: needs {total / 1024 ** 3:.1f} GB + 2 GB spare, {free / 1024 ** 3:.1f} GB free")
            continue
        ns = namespace_of(total)
        frames = sum(isinstance(v, pd.DataFrame) for v in ns.values())
        ms, cpu, names, unchecked = added_ms(ns, repeat)
        print(f"{label:>10} {frames:>7} {names:>6} {ms:>9.2f} {cpu:>7.2f} {GOAL_MS:>8.0f} {ms / GOAL_MS:>6.2f} "
              f"{unchecked}")
        del ns
        gc.collect()


def notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    cells = ["import pandas as pd\nimport numpy as np"]
    cells += [f"df{i} = pd.DataFrame({{'a': np.arange(20_000) * {i}, 'b': 1.5}})\nprint(df{i}.describe().loc['mean'])"
              for i in range(19)]
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    return nb


def part_two(repeat: int) -> None:
    from nbclient import NotebookClient

    from nbagent.tools.nbcheck import check_notebook

    with tempfile.TemporaryDirectory() as tmp:
        plain, check = [], []
        nb = notebook()
        NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": tmp}}).execute()  # stored outputs
        stored = dict(nb)
        for run in range(repeat):
            for which in (("plain", "check") if run % 2 == 0 else ("check", "plain")):  # neither always first
                started = time.perf_counter()
                if which == "plain":
                    NotebookClient(nbformat.from_dict(stored), kernel_name="python3", timeout=120,
                                   resources={"metadata": {"path": tmp}}).execute()
                    plain.append(time.perf_counter() - started)
                else:
                    report = check_notebook(stored, "bench.ipynb", Path(tmp), 120)
                    check.append(time.perf_counter() - started)
                    assert report.clean, report.text()
    a, b = statistics.median(plain), statistics.median(check)
    print(f"\nnotebook_check against a plain nbclient run (20 cells, fresh kernel each), median of {repeat}")
    print(f"{'plain nbclient s':>17} {'notebook_check s':>17} {'ratio':>6} {'goal':>5}")
    print(f"{a:>17.2f} {b:>17.2f} {b / a:>6.2f} {1.1:>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10MB,1GB,4GB")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--check-repeat", type=int, default=5)
    args = parser.parse_args()
    part_one(args.sizes.split(","), args.repeat)
    part_two(args.check_repeat)


if __name__ == "__main__":
    main()
