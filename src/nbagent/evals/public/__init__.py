"""Public benchmarks in ``nbagent eval``: DSEval's problem sets and DABStep's questions, beside their published figures.

    nbagent eval dseval --model gpt-4.1-mini --tasks '03-*'      # DSEval Exercise, pinned release
    nbagent eval dabstep --model gpt-4.1-mini                    # DABStep's 10 dev questions

    import nbagent.evals.public as public
    df = public.dseval(models=["gpt-4.1-mini"], tasks="03-*", data="~/src/dseval")

Each adapter turns the benchmark's own data into tasks (``dseval_tasks``, ``dabstep_tasks``), runs them as
``nbagent.eval`` runs a suite (``run``) and judges them by the benchmark's own rule; the report
places the pass rate beside the figures the benchmark's authors published (``published``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

NAMES = ("dseval", "dabstep")
__all__ = ["dseval", "dabstep"]


def dseval(models: Any = None, repeat: int = 1, *, tasks: str | None = None, data: str | Path | None = None,
           benchmark: str = "exercise", url: str | None = None, **options: Any):
    """DSEval's ``benchmark`` (exercise, so, leetcode, kaggle): one task per problem set matching
    ``tasks`` (globs on the set's name), one row per question; ``data`` a local copy, else the
    pinned release. Other options as ``nbagent.eval``."""
    from ..run import _out_folder
    from . import dseval_tasks as adapter
    from .dseval_format import load_benchmark
    from .run import run_planned

    folder, source = adapter.locate(data, benchmark, url=url)
    bench = load_benchmark(folder)
    out = _out_folder(options.pop("out", None))
    planned = adapter.plan(bench, out / "tasks", tasks)
    return run_planned(adapter.describe(bench, source), planned, models, repeat, folder=out, **options)


def dabstep(models: Any = None, repeat: int = 1, *, tasks: str | None = None, data: str | Path | None = None,
            **options: Any):
    """DABStep's dev questions (those matching ``tasks``: task ids or levels, globs), each a notebook
    to write; ``data`` a local copy of the dataset, else the pinned revision."""
    import fnmatch

    from ...errors import ConfigError
    from ..run import _out_folder
    from . import dabstep_tasks as adapter
    from .fetch import git_tree_id
    from .run import BenchmarkInfo, PlannedTask, run_planned

    folder = adapter.locate(data)
    questions = adapter.questions(folder)
    globs = [g.strip() for g in (tasks or "*").split(",") if g.strip()]
    chosen = [q for q in questions if any(fnmatch.fnmatchcase(n, g) for g in globs for n in (q.task_id, q.level))]
    if not chosen:
        raise ConfigError(f"no DABStep dev question matches {tasks!r}")
    out = _out_folder(options.pop("out", None))
    planned = []
    for q in chosen:
        workspace = adapter.make_workspace(folder, out / "tasks" / f"task-{q.task_id}")
        planned.append(PlannedTask(name=f"task-{q.task_id}", workspace=workspace, prompts=(adapter.prompt(q, folder),),
                                   checker=("nbagent.evals.public.dabstep_check", adapter.NOTEBOOK, q.answer),
                                   tags=("dabstep", q.level)))
    pinned = data is None
    source = (f"DABStep {adapter.REVISION[:12]} (pinned revision, sha256 of every file checked)" if pinned
              else f"local copy {folder}")
    bench = BenchmarkInfo(key="dabstep", name="DABStep", version=adapter.REVISION[:12] if pinned else "local",
                      split="dev", digest=git_tree_id(folder)[:12], data=source)
    return run_planned(bench, planned, models, repeat, folder=out, **options)
