"""Running a public benchmark's tasks through nbagent.batch: several turns per task, several judged parts per check.

A benchmark adapter plans ``PlannedTask``s (a workspace, its prompts in order, the checker that judges
the finished workspace); ``run_planned`` runs them as ``nbagent.eval`` runs a suite (every model or
configuration, every repeat, one session per task in a throw-away copy) and writes the same report,
with the published figures it can be compared with. When a check judges parts (DSEval's questions),
each part is a row, with its own turn's steps, tokens and cost.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ...batching import Source, TaskSpec, folder_size, run_specs
from ...errors import ConfigError
from ...ids import short_id
from ..run import COLUMNS, EVAL_DEFAULTS, Arm, _nbagent_version, _out_folder, describe_arm, make_arms
from ..runner import CHECK_TIME_LIMIT, run_check
from ..task import DEFAULT_TIME_LIMIT

_TURN = ("steps", "tool_calls", "input_tokens", "cached_tokens", "output_tokens", "cost")


@dataclass(frozen=True)
class PlannedTask:
    name: str
    workspace: Path
    prompts: tuple[str, ...]
    checker: tuple[str, ...]
    """The check's module and arguments (``python -P -m ...``; the result file is appended), run in
    the finished workspace."""
    parts: tuple[str, ...] = ()
    """The names of the parts the check judges, one per prompt (DSEval's questions); none: one row."""
    tags: tuple[str, ...] = ()
    time_limit: float = DEFAULT_TIME_LIMIT
    reads: tuple[Path, ...] = ()
    """Folders the check reads besides the workspace (DSEval's question file's), visible in its sandbox."""


@dataclass(frozen=True)
class BenchmarkInfo:
    """What the report states about the tasks: which benchmark, split and data."""

    key: str
    name: str
    version: str
    split: str
    digest: str
    data: str


def run_planned(bench: BenchmarkInfo, tasks: list[PlannedTask], models: Any = None, repeat: int = 1, *,
                configs: dict[str, dict[str, Any]] | None = None, out: str | Path | None = None,
                concurrency: int = 4, client: Any = None, progress: Callable | bool | None = None,
                time_limit: float | None = None, check_time_limit: float = CHECK_TIME_LIMIT,
                folder: Path | None = None, **agent_options: Any):
    """Run every task for every arm and repeat; the results DataFrame (written with the report)."""
    import pandas as pd

    from ..report import write_results
    from .published import beside

    if repeat < 1:
        raise ConfigError("repeat must be at least 1")
    if not tasks:
        raise ConfigError(f"no task of {bench.name} was chosen")
    arms = make_arms(models, configs, agent_options)
    folder = folder or _out_folder(out)
    plan = [(arm, run, task) for arm in arms for run in range(1, repeat + 1) for task in tasks]
    batch_id = short_id("eval_")
    specs = [_spec(i, arm, task, folder, batch_id, concurrency, time_limit, check_time_limit)
             for i, (arm, _, task) in enumerate(plan)]
    rows = run_specs(folder, specs, concurrency=concurrency, client=client, progress=progress)
    frame = pd.DataFrame([r for row in rows for r in expand(plan[row["task"]], row)], columns=COLUMNS)
    questions = sum(max(1, len(t.parts)) for t in tasks)
    frame.attrs.update({
        "suite": bench.name, "suite_version": bench.version, "suite_digest": bench.digest,
        "tasks": [t.name for t in tasks], "repeat": repeat, "out": str(folder), "eval_id": batch_id,
        "nbagent_version": _nbagent_version(), "started": dt.datetime.now().isoformat(timespec="seconds"),
        "arms": [describe_arm(arm) for arm in arms], "benchmark": bench.key, "split": bench.split,
        "data": bench.data, "questions": questions, "published": beside(bench.key, bench.split, questions)})
    write_results(frame, folder)
    return frame


def _spec(index: int, arm: Arm, task: PlannedTask, folder: Path, batch_id: str, concurrency: int,
          time_limit: float | None, check_time_limit: float) -> TaskSpec:
    options = {**EVAL_DEFAULTS, **arm.options}
    if options.get("approval") not in ("auto", "read-only"):
        raise ConfigError("an eval runs unattended: approval must be auto or read-only")
    source = Source(workspace=task.workspace, size=folder_size(task.workspace))
    after = functools.partial(check_planned, task.checker, check_time_limit, reads=task.reads)
    return TaskSpec(index=index, prompt=task.prompts[0], followups=task.prompts[1:], workspace=str(folder),
                    batch_id=batch_id, source=source, agent_options=options, concurrency=concurrency,
                    time_limit=time_limit or task.time_limit, after=after)


def check_planned(checker: tuple[str, ...], time_limit: float, workspace: Path, row: dict[str, Any], *,
                  reads: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Batch's after-hook: the benchmark's check on the finished copy."""
    return run_check(workspace, workspace, row.get("text") or "", time_limit=time_limit, module=checker, reads=reads)


def expand(planned: tuple[Arm, int, PlannedTask], row: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's rows: one, or one per part with the figures of the turn that asked it."""
    arm, run, task = planned
    base = {"model": arm.label, "run": run, "session_id": row.get("session_id"), "config": arm.config,
            "check_seconds": float(row.get("check_seconds") or 0.0), "error": row.get("error"),
            "tags": ",".join(task.tags)}
    if not task.parts:
        seconds = max(0.0, float(row.get("seconds") or 0.0) - base["check_seconds"])
        return [{**base, "task": task.name, "passed": bool(row.get("passed")), "reason": _reason(row),
                 "end": row.get("reason"), "seconds": seconds, **{k: row.get(k, 0) for k in _TURN}}]
    judged = {p.get("name"): p for p in row.get("check_parts") or []}
    turns = row.get("turns") or [row]
    rows = []
    for i, name in enumerate(task.parts):
        turn = turns[i] if i < len(turns) else None
        part = judged.get(name)
        passed = bool(part and part.get("passed"))
        rows.append({**base, "task": f"{task.name}/{name}", "passed": passed,
                     "reason": "" if passed else _part_reason(row, turn, part),
                     "end": turn["reason"] if turn else "not asked", "seconds": (turn or {}).get("seconds", 0.0),
                     **{k: (turn or {}).get(k, 0 if k != "cost" else None) for k in _TURN}})
    return rows


def _reason(row: dict[str, Any]) -> str:
    if row.get("passed"):
        return ""
    parts = []
    if row.get("reason") not in ("done", None):
        parts.append(f"agent ended with {row.get('reason')}")
    if row.get("error"):
        parts.append(str(row["error"]).splitlines()[0][:300])
    parts.append(f"check failed: {row.get('check_reason') or 'no reason given'}" if "passed" in row
                 else "the check did not run")
    return "; ".join(parts)


def _part_reason(row: dict[str, Any], turn: dict[str, Any] | None, part: dict[str, Any] | None) -> str:
    if turn is None:
        return "not asked: an earlier question's turn did not end done"
    parts = [f"agent ended with {turn['reason']}"] if turn.get("reason") != "done" else []
    if part is None:
        parts.append(f"check failed: {row.get('check_reason') or 'the check did not run'}")
    else:
        parts.append(f"check failed: {part.get('reason') or 'no reason given'}")
    return "; ".join(parts)
