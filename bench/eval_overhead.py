"""Harness overhead of the public benchmarks in ``nbagent eval``: per DSEval question and per DABStep task.

    .venv/bin/python bench/eval_overhead.py [--runs 3]

On the scripted model (no model time) and the tests' data (the DSEval subset's problem set
03-grouping-alcohol-consumption: 6 questions; the synthetic mini DABStep: 3 dev questions), one
task at a time. The overhead is what
the harness adds to a run around the agents' turns: the run's wall time minus the seconds of every
turn (planning the tasks and their workspaces, the throw-away copies, the checks with their fresh
kernel or namespace, moving the sessions, the report), divided by the questions (DSEval: its check
judges all of a set's questions at once) or the tasks (DABStep: its check re-runs the notebook in a
fresh kernel). Goal: at most 2 s per DSEval question and 3 s per DABStep task, so that a run's
time is the model's. Each figure is the median of --runs runs (each run's figure is printed too).

Wall time on a shared machine is mostly waiting for a core: the load average is printed, and beside
the wall figure the CPU seconds per unit of this process and its children (checks, kernels, the
agents' commands), turns included: an upper bound of the harness's own CPU, which is what the wall
figure comes down to on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from nbagent.evals import public
from nbagent.evals.public.dseval_format import read_problem_set
from nbagent.testing import Call, Reply, ScriptedServer

DATA = Path(__file__).resolve().parent.parent / "tests" / "eval" / "public"
GOALS = {"dseval": 2.0, "dabstep": 3.0}
APPEND = ("import nbformat, sys; p, s = sys.argv[1], sys.argv[2]; nb = nbformat.read(p, 4); "
          "nb.cells.append(nbformat.v4.new_code_cell(s)); nbformat.write(nb, p)")


def dseval_reference(body: dict):
    """Appends DSEval's reference code as each question's '# QN' cell, then says it is done."""
    if body["messages"][-1]["role"] != "user":
        return Reply(text="Answered.")
    prompts = [m["content"] for m in body["messages"] if m["role"] == "user"]
    notebook = re.search(r"in the notebook (\S+\.ipynb)", prompts[0]).group(1)
    number = int(re.search(r"Question (\d+) \(# Q", prompts[-1]).group(1))
    code = read_problem_set(DATA / "dseval" / "exercise" / notebook.replace(".ipynb", ".py")).questions[number - 1].code
    cell = f"# Q{number}\n{code}"
    return Reply(tool_calls=[Call("bash", {"command": f"{shlex.quote(sys.executable)} -c {shlex.quote(APPEND)} "
                                                      f"{notebook} {shlex.quote(cell)}"})])


ANSWERS = {json.loads(line)["question"]: json.loads(line)["answer"]
           for line in (DATA / "dabstep" / "tasks" / "dev.jsonl").read_text().splitlines()}


def dabstep_reference(body: dict):
    """Writes answer.ipynb printing the expected answer with the notebook tool, then says it is done."""
    if body["messages"][-1]["role"] != "user":
        return Reply(text="Done.")
    prompt = body["messages"][-1]["content"]
    answer = next(a for q, a in ANSWERS.items() if q in prompt)
    return Reply(tool_calls=[Call("notebook_insert", {"path": "answer.ipynb", "cell_type": "code",
                                                      "source": f"print({answer!r})"})])


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one_run(name: str, out: Path) -> tuple[float, float, int]:
    """(overhead seconds, CPU seconds, per question or task; how many) for one run of the benchmark."""
    responder = dseval_reference if name == "dseval" else dabstep_reference
    with ScriptedServer(responder=responder) as server:
        options = dict(models=["reference"], base_url=server.url, api_key="sk-bench", max_retries=0,
                       concurrency=1, progress=False, out=out)
        started, cpu = time.perf_counter(), cpu_seconds()
        if name == "dseval":
            df = public.dseval(data=DATA / "dseval", tasks="03-*", **options)
        else:
            df = public.dabstep(data=DATA / "dabstep", **options)
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    assert df["passed"].all(), df["reason"].tolist()
    return (wall - float(df["seconds"].sum())) / len(df), cpu / len(df), len(df)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'benchmark':<9} {'unit':<9} {'overhead s (median)':>20} {'goal':>6} {'ratio':>6} {'CPU s':>6}   runs")
    for name, unit in (("dseval", "question"), ("dabstep", "task")):
        figures, cpus, count = [], [], 0
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="nbagent-bench-") as tmp:
                seconds, cpu, count = one_run(name, Path(tmp) / f"run{run}")
            figures.append(seconds)
            cpus.append(cpu)
        median = statistics.median(figures)
        print(f"{name:<9} {unit:<9} {median:>20.2f} {GOALS[name]:>6.1f} {median / GOALS[name]:>6.2f} "
              f"{statistics.median(cpus):>6.2f}   {', '.join(f'{f:.2f}' for f in figures)} ({count} {unit}s each)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
