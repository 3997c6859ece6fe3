"""``nbagent eval [SUITE] --model M [--model M2] [--repeat N] [--tasks PATTERN] [--out DIR]``: run a task suite and report."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..errors import ConfigError


def add_eval_parser(sub, parents=()) -> None:
    # Not the shared --workspace: every task brings its own workspace, and the sessions go to --out.
    p = sub.add_parser("eval", help="run a suite of tasks with checks and report the pass rate per model",
                       description="Each task of SUITE (a folder of task folders; default: the built-in suite) "
                                   "runs in its own copy of its workspace, then its check decides. Results "
                                   "and report.html go to --out.")
    p.add_argument("suite", nargs="?", help="a folder of task folders (default: the built-in suite), or a public "
                                            "benchmark: dseval, dabstep (docs/eval.md, Public benchmarks)")
    p.add_argument("--model", "-m", action="append", dest="models",
                   help="model name; repeat it to compare models (default: NBAGENT_MODEL or the offline model)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)")
    p.add_argument("--repeat", "-r", type=int, default=1, help="runs of every task per model (default 1)")
    p.add_argument("--tasks", "-t", help="task names or tags to run (globs, comma-separated)")
    p.add_argument("--out", "-o", help="folder for results.csv, report.html and the sessions "
                                       "(default ./nbagent-eval/<time>)")
    p.add_argument("--config", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                   help="a configuration to compare, e.g. 'small:profile=small'; repeat it for more")
    p.add_argument("--concurrency", "-j", type=int, default=4, help="tasks at once (default 4)")
    p.add_argument("--scheduler", help="a Dask scheduler address (tcp://host:8786) to run the tasks on")
    p.add_argument("--toolsets", help="comma-separated tool sets (default: each task's own)")
    p.add_argument("--max-steps", type=int, help="model calls per task (default: each task's own)")
    p.add_argument("--time-limit", type=float, help="seconds per task (default: each task's own)")
    p.add_argument("--data", help="dseval, dabstep: a local copy of the benchmark's data (default: the pinned "
                                  "release, downloaded once and checked)")
    p.add_argument("--benchmark", default="exercise",
                   help="dseval: which of its benchmarks (exercise, so, leetcode, kaggle; default exercise)")
    p.set_defaults(handler=run_eval_command)


def parse_config(text: str) -> tuple[str, dict[str, Any]]:
    """``"name:key=value,key=value"`` as a name and its options (values stay strings: the agent's
    configuration converts them as it does environment variables)."""
    name, sep, rest = text.partition(":")
    if not sep or not name.strip():
        raise ConfigError(f"--config {text!r}: write it as NAME:KEY=VALUE,... (e.g. small:profile=small)")
    options: dict[str, Any] = {}
    key = None
    for piece in filter(None, (p.strip() for p in rest.split(","))):
        name_part, eq, value = piece.partition("=")
        if eq and name_part.strip():
            key = name_part.strip().replace("-", "_")
            options[key] = value.strip()
        elif key is not None:  # a list value goes on: toolsets=core,notebook
            options[key] += "," + piece
        else:
            raise ConfigError(f"--config {text!r}: {piece!r} is not KEY=VALUE")
    return name.strip(), options


def run_eval_command(args: argparse.Namespace) -> int:
    from ..evals.stats import summary

    started = time.monotonic()
    configs = dict(parse_config(c) for c in args.config) or None
    options = {k: v for k, v in dict(base_url=args.base_url, toolsets=args.toolsets, max_steps=args.max_steps,
                                      time_limit=args.time_limit).items() if v is not None}
    client = None
    bar = EvalProgress() if sys.stderr.isatty() else None
    if args.scheduler:
        from dask.distributed import Client

        client = Client(args.scheduler)
    try:
        frame = _run(args, configs, client, options, bar.update if bar is not None else False)
    finally:
        if client is not None:
            client.close()
        if bar is not None:
            bar.close()
    for r in summary(frame).itertuples():
        print(f"{r.model}: {r.passed} of {r.runs * r.tasks} passed ({r.pass_rate:.0%}); 95% interval "
              f"{r.ci_low:.0%} to {r.ci_high:.0%}, {r.interval}")
    for figure in frame.attrs.get("published", []):
        like = "like for like" if figure["like_for_like"] else f"not like for like: {figure['why_not']}"
        print(f"published: {figure['benchmark']} {figure['split']}: {figure['pass_rate']:.1%} ({figure['who']}, "
              f"{figure['date']}; {like})")
    passed, total = sum(bool(x) for x in frame["passed"]), len(frame)
    print(f"nbagent eval: {passed} of {total} task run(s) passed in {time.monotonic() - started:.0f} s; "
          f"report: {frame.attrs['out']}/report.html", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace, configs: Any, client: Any, options: dict[str, Any], progress: Any):
    """A public benchmark by name (unless a folder of that name is given), else a suite."""
    from pathlib import Path

    common = dict(tasks=args.tasks, configs=configs, out=args.out, concurrency=args.concurrency, client=client,
                  progress=progress, **options)
    if args.suite in ("dseval", "dabstep") and not Path(args.suite).is_dir():
        from ..evals import public

        if args.suite == "dseval":
            return public.dseval(args.models, args.repeat, data=args.data, benchmark=args.benchmark, **common)
        return public.dabstep(args.models, args.repeat, data=args.data, **common)
    from ..evals.run import run_suite

    return run_suite(args.suite, args.models, args.repeat, **common)


class EvalProgress:
    """On a terminal: a bar that moves one step per finished task, with the passed and failed so far and
    the name of the task that just finished."""

    def __init__(self) -> None:
        self._bar: Any = None
        self.passed = self.failed = 0

    def update(self, done: int, total: int, row: dict) -> None:
        from tqdm import tqdm

        if self._bar is None:
            self._bar = tqdm(total=total, unit="task", desc="nbagent eval", file=sys.stderr, dynamic_ncols=True)
        ok = bool(row.get("passed"))
        self.passed, self.failed = self.passed + ok, self.failed + (not ok)
        self._bar.set_postfix_str(f"passed {self.passed}, failed {self.failed}", refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
