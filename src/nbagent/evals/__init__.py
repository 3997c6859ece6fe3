"""Evals: does the agent get notebook work done, with this model? Tasks with checks, run through nbagent.batch, reported.

    import nbagent
    df = nbagent.eval(models=["gpt-4.1-mini", "qwen2.5-coder:7b"], repeat=3)   # the built-in suite
    df = nbagent.eval("my-tasks/", models=["gpt-4.1-mini"], tasks="fix-*", out="eval-out")

A task is a folder (task.toml, workspace/, check.py, solution/: see nbagent.evals.task and
docs/eval.md); a suite is a folder of them, the built-in one shipped in nbagent/evals/suite. Each
task runs in its own throw-away copy of its workspace, then its check decides; the DataFrame has
one row per task, model and run, and the run's folder holds results.csv and report.html.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .task import BUILTIN_SUITE, Suite, Task, load_suite

if TYPE_CHECKING:  # lazy at run time (__getattr__ below)
    from .run import COLUMNS

__all__ = ["BUILTIN_SUITE", "COLUMNS", "Suite", "Task", "eval", "load_suite"]


def eval(suite: str | Path | Suite | None = None, models: Any = None, repeat: int = 1, **agent_options: Any):  # noqa: A001
    """Run every task of ``suite`` (a folder of task folders; None: the built-in suite) for each of
    ``models`` (names; None: the configured model), ``repeat`` times; a DataFrame, one row each.

    Keyword arguments: ``tasks`` (names or tags to run, globs, comma-separated), ``configs``
    (``{"name": {agent options}}``: configurations to compare, each run with every model), ``out``
    (the folder for results.csv, report.html and the sessions; default ./nbagent-eval/<time>),
    ``concurrency``, ``client`` (a dask.distributed Client), ``progress``, ``time_limit`` (seconds,
    overriding each task's), and any Agent option (base_url, api_key, toolsets, max_steps, ...).
    Approval is each task's own setting, else "auto": every task runs in a throw-away copy.
    """
    from .run import run_suite

    return run_suite(suite, models, repeat, **agent_options)


def __getattr__(name: str) -> Any:
    # Lazy: a check's process imports nbagent.evals.checks, and must not load the batch machinery.
    if name == "COLUMNS":
        from .run import COLUMNS

        return COLUMNS
    raise AttributeError(f"module 'nbagent.evals' has no attribute {name!r}")
