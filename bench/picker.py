"""The @ picker per keystroke at 30,000 files: narrowing from the previous query vs rescanning every file.

    .venv/bin/python bench/picker.py [--files 30000]

Types a few queries one character at a time (and a backspace) against a synthetic tree of source
files; "rescan" is the same ranking on a fresh matcher for every keystroke (what the picker did
before), "narrow" keeps the previous keystroke's matches. Goal: under 5 ms per keystroke.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from nbagent.workspace.picker import Picker

WORDS = ["src", "lib", "core", "utils", "models", "views", "tests", "data", "io", "plot", "config", "api",
         "server", "client", "widgets", "parser", "render", "cache", "store", "jobs"]
QUERIES = ["src/models/vi", "plot", "test_cache", "cfg", "utils/par"]


def tree(count: int, rng: random.Random) -> list[str]:
    files = set()
    while len(files) < count:
        depth = rng.randint(1, 5)
        parts = [rng.choice(WORDS) + (str(rng.randint(0, 9)) if rng.random() < 0.3 else "") for _ in range(depth)]
        name = rng.choice(["test_", "", "", "_"]) + rng.choice(WORDS) + rng.choice([".py", ".ts", ".md", ".json"])
        files.add("/".join([*parts, name]))
    return sorted(files)


def keystrokes() -> list[str]:
    typed = []
    for q in QUERIES:
        typed += [q[:n] for n in range(1, len(q) + 1)]
        typed.append(q[:-1])  # one backspace
    return typed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=30_000)
    args = parser.parse_args()
    files = tree(args.files, random.Random(3))
    typed = keystrokes()
    rescan, narrow, rescan_cpu, narrow_cpu = [], [], [], []
    kept, fresh_each_time = Picker(files), Picker(files)
    for q in typed:
        fresh_each_time._stack.clear()  # forget the earlier keystrokes: a scan of every file
        t, c = time.perf_counter(), time.process_time()
        fresh = fresh_each_time.pick(q)
        rescan.append(time.perf_counter() - t)
        rescan_cpu.append(time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        got = kept.pick(q)
        narrow.append(time.perf_counter() - t)
        narrow_cpu.append(time.process_time() - c)
        assert got == fresh, (q, got, fresh)
    ms = lambda xs: f"median {statistics.median(xs) * 1000:6.2f} ms, max {max(xs) * 1000:6.2f} ms"  # noqa: E731
    print(f"{len(files)} files, {len(typed)} keystrokes ({', '.join(QUERIES)}, each then one backspace)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; wall clock, and the process's CPU time")
    print(f"rescan every keystroke:  {ms(rescan)}; cpu median {statistics.median(rescan_cpu) * 1000:6.2f} ms")
    print(f"narrow from previous:    {ms(narrow)}; cpu median {statistics.median(narrow_cpu) * 1000:6.2f} ms")
    print("goal: under 5 ms per keystroke")


if __name__ == "__main__":
    main()
