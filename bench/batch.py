"""Batch throughput: 64 tasks against the scripted server (200 ms of model latency per step), locally and on Dask.

    .venv/bin/python bench/batch.py [--tasks 64] [--latency 0.2] [--levels 1,4,16] [--repeat 3]

Each task is two model steps (a write_file call, then the answer) in its own isolated checkout of a
small repository, with approval "auto"; the scripted server runs in a process of its own. Rows:
tasks per second at each concurrency, locally (asyncio + a semaphore, one process) and on a
two-worker Dask LocalCluster, beside the linear ideal (the concurrency-1 throughput times the
concurrency); each place is warmed up first by an untimed batch of 4 tasks (imports and first-use
caches are not what a task costs). Goal: within 80% of linear up to 16. Each row is the median of
--repeat runs (3; each run's tasks/s is printed at the end of the row, as the machine is shared and
noisy); its median task time and CPU figures are those of that median run.

The CPU columns say where the ceiling is: CPU milliseconds per task in Python (the processes
running agents: this one, and the Dask workers) and in their child processes (git, rg), and
the throughput that CPU alone allows: Python holds one interpreter lock per process, so one
process runs at most 1000/python-ms tasks a second, and all of it shares the machine's cores.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import re
import statistics
import subprocess
import tempfile
import time
import types
from pathlib import Path

import psutil

import nbagent
from nbagent.testing import Call, Reply, ScriptedServer, Stall


def responder(latency: float):
    def answer(body: dict):
        messages = body["messages"]
        task = next(m["content"] for m in messages if m["role"] == "user")
        if messages[-1]["role"] == "user":
            name = re.search(r"task (\d+)", task).group(1)
            reply = Reply(tool_calls=[Call("write_file", {"path": f"out{name}.txt", "content": task})])
        else:
            reply = Reply(text=f"done: {task}")
        return Stall(latency, reply)

    return answer


@contextlib.contextmanager
def model_server(latency: float):
    """The scripted server in a process of its own, as a model endpoint is: its CPU is not taken from
    the interpreter running the agents (the machine's cores are still shared)."""
    context = multiprocessing.get_context("fork")  # before any thread or cluster exists here
    parent, child = context.Pipe()
    process = context.Process(target=_serve, args=(latency, child), daemon=True)
    process.start()
    try:
        yield types.SimpleNamespace(url=parent.recv())
    finally:
        parent.send("stop")
        process.join(10)


def _serve(latency: float, pipe) -> None:
    with ScriptedServer(responder=responder(latency)) as server:
        pipe.send(server.url)
        pipe.recv()


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for i in range(50):
        (repo / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=repo, check=True)
    return repo


def cpu_seconds(client=None) -> tuple[float, float]:
    """(Python, children) CPU seconds so far of this process and, with a client, of its workers."""
    def mine() -> tuple[float, float]:
        t = psutil.Process().cpu_times()
        return t.user + t.system, t.children_user + t.children_system

    own, kids = mine()
    if client is not None:
        for worker_own, worker_kids in client.run(mine).values():
            own, kids = own + worker_own, kids + worker_kids
    return own, kids


def one_run(repo: Path, tasks: int, concurrency: int, options: dict, client=None
            ) -> tuple[float, float, int, float, float]:
    before = cpu_seconds(client)
    started = time.perf_counter()
    df = nbagent.batch([f"task {i}" for i in range(tasks)], workspace=repo, approval="auto",
                       concurrency=concurrency, client=client, progress=False, **options)
    seconds = time.perf_counter() - started
    after = cpu_seconds(client)
    errors = [e for e in df["error"] if isinstance(e, str)]
    for kind in sorted({e.split("\n")[0][-200:] for e in errors}):
        print(f"        failure: {kind}")
    own_ms, kids_ms = ((a - b) / tasks * 1000 for a, b in zip(after, before))
    return tasks / seconds, statistics.median(df["seconds"]), len(errors), own_ms, kids_ms


def _median_run(runs: list[tuple]) -> tuple:
    """The run of median throughput (its other figures with it); failures summed over all runs."""
    ordered = sorted(runs, key=lambda r: r[0])
    rate, task_s, _, own_ms, kids_ms = ordered[len(ordered) // 2]
    return rate, task_s, sum(r[2] for r in runs), own_ms, kids_ms


def cpu_ceiling(own_ms: float, kids_ms: float, processes: int) -> float:
    """Tasks per second the CPU allows: one interpreter lock per agent process, the cores shared by all."""
    cores = os.cpu_count() or 1
    return min(1000 * processes / own_ms, 1000 * cores / (own_ms + kids_ms))


_BASE: dict[str, float] = {}


def row(where: str, level: int, repo: Path, options: dict, client, args) -> None:
    """Print one row: the median of ``args.repeat`` runs at this concurrency, beside linear scaling."""
    if where not in _BASE:  # imports and first-use caches are not what a batch costs per task
        one_run(repo, 4, 2, options, client)
    runs_here = [one_run(repo, args.tasks, level, options, client) for _ in range(args.repeat)]
    rates = sorted(r[0] for r in runs_here)
    rate, task_s, failed, own_ms, kids_ms = _median_run(runs_here)
    _BASE.setdefault(where, rate / level)
    linear = _BASE[where] * level
    ceiling = cpu_ceiling(own_ms, kids_ms, 1 if client is None else len(client.scheduler_info()["workers"]))
    print(f"{where:7} {level:5d} | {rate:8.2f} {linear:8.2f} {rate / linear:9.0%} | "
          f"{task_s:13.2f} {failed:6d} | {own_ms:9.0f} {kids_ms:8.0f} {ceiling:8.1f}/s | "
          + " ".join(f"{r:.1f}" for r in rates), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--levels", default="1,4,16")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the row shows the median run")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    print(f"{args.tasks} tasks, {args.latency * 1000:.0f} ms model latency per step, 2 steps a task; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print(f"{'where':7} {'conc.':>5} | {'tasks/s':>8} {'linear':>8} {'of linear':>9} | {'median task s':>13} "
          f"{'failed':>6} | {'python ms':>9} {'child ms':>8} {'CPU allows':>10} | tasks/s of each run")
    with tempfile.TemporaryDirectory() as tmp, model_server(args.latency) as server:
        repo = make_repo(Path(tmp))
        options = {"model": "scripted-model", "base_url": server.url, "api_key": "sk-bench", "memory": False,
                   "max_retries": 0}
        for level in levels:
            row("local", level, repo, options, None, args)
        try:  # the cluster starts after the local rows: its idle workers would take CPU from them
            from dask.distributed import Client, LocalCluster
        except ImportError:
            print("(dask[distributed] is not installed: local runs only; pip install 'jupyter-nbagent[batch]')")
            return
        with LocalCluster(n_workers=2, threads_per_worker=max(levels) // 2 or 1, processes=True,
                          dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
            for level in levels:
                row("dask", level, repo, options, client, args)
    print(f"\ngoal: within 80% of linear up to 16; load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
