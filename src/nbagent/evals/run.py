"""Running a suite: every task, for every model or configuration and every repeat, through nbagent.batch, then its check.

Each task runs as a batch task (its own session in its own throw-away copy of its workspace, in
parallel, locally or on Dask); before the copy goes, the task's check runs on it in a fresh process
(``TaskSpec.after``). The rows come back as one DataFrame, one row per task, model and run, and are
written with the HTML report into the run's folder, which also holds the sessions
(``nbagent sessions show ID -w FOLDER``).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from ..batching import Source, TaskSpec, folder_size, run_specs
from ..errors import ConfigError
from ..ids import short_id
from .runner import CHECK_TIME_LIMIT, run_check
from .task import APPROVALS, Suite, Task, load_suite

COLUMNS = ["task", "model", "run", "passed", "reason", "end", "steps", "tool_calls", "input_tokens",
           "cached_tokens", "output_tokens", "cost", "seconds", "session_id", "config", "check_seconds",
           "error", "tags"]
"""One row per task, model (or configuration) and run. ``reason`` says why a task failed ("" when it
passed); ``end`` is how the agent's turn ended (done, max_steps, error, aborted, timeout)."""

EVAL_DEFAULTS = {"memory": False, "approval": "auto"}
"""An eval measures the model on the task alone: no project or user memory carried in."""


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: a model and the options it runs with, under one label."""

    label: str
    model: str | None
    config: str
    options: dict[str, Any] = field(default_factory=dict)


def run_suite(suite: str | Path | Suite | None = None, models: Any = None, repeat: int = 1, *,
              tasks: str | None = None, configs: dict[str, dict[str, Any]] | None = None,
              out: str | Path | None = None, concurrency: int = 4, client: Any = None,
              progress: Callable[[int, int, dict], None] | bool | None = None, time_limit: float | None = None,
              check_time_limit: float = CHECK_TIME_LIMIT, **agent_options: Any):
    """Run the suite and write results.csv and report.html into ``out``; the results DataFrame."""
    import pandas as pd

    chosen = (suite if isinstance(suite, Suite) else load_suite(suite)).select(tasks)
    if repeat < 1:
        raise ConfigError("repeat must be at least 1")
    arms = make_arms(models, configs, agent_options)
    folder = _out_folder(out)
    plan: list[tuple[Arm, int, Task]] = [(arm, run, task) for arm in arms for run in range(1, repeat + 1)
                                         for task in chosen.tasks]
    batch_id = short_id("eval_")
    specs = [_spec(i, arm, task, folder, batch_id, concurrency, time_limit, check_time_limit)
             for i, (arm, _, task) in enumerate(plan)]
    rows = run_specs(folder, specs, concurrency=concurrency, client=client, progress=progress)
    offline = {arm.label for arm in arms if resolve_model(arm.options)[2]}
    frame = pd.DataFrame([_eval_row(plan[row["task"]], row, time_limit, offline) for row in rows], columns=COLUMNS)
    frame.attrs.update(run_info(chosen, arms, repeat, folder, batch_id))
    from .report import write_results

    write_results(frame, folder)
    return frame


def make_arms(models: Any, configs: dict[str, dict[str, Any]] | None,
              agent_options: dict[str, Any]) -> list[Arm]:
    """Every model crossed with every configuration (one unnamed configuration when none is given)."""
    names: list[str | None] = [models] if models is None or isinstance(models, str) else list(models)
    if not names:
        raise ConfigError("models must name at least one model (or be None for the configured one)")
    if any(n is not None and not isinstance(n, str) for n in names):
        raise ConfigError("models are model names (strings): every task builds its own agent from them")
    variants = dict(configs) if configs else {"": {}}
    arms = []
    for name in names:
        for config, options in variants.items():
            if not isinstance(options, dict):
                raise ConfigError(f"configuration {config!r} must be a dict of agent options")
            model = options.get("model", name)
            shown = model or resolve_model({**agent_options, **options})[0]
            label = " · ".join(p for p in (shown, config) if p)
            arms.append(Arm(label=label, model=model, config=config,
                            options={**agent_options, **options, **({"model": model} if model else {})}))
    labels = [a.label for a in arms]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"two runs would share the label {_first_repeat(labels)!r}: name each model once")
    return arms


def _first_repeat(labels: list[str]) -> str:
    return next(label for i, label in enumerate(labels) if label in labels[:i])


def _spec(index: int, arm: Arm, task: Task, folder: Path, batch_id: str, concurrency: int,
          time_limit: float | None, check_time_limit: float) -> TaskSpec:
    options = {**EVAL_DEFAULTS, **task.agent_options(), **arm.options}
    if options.get("approval") not in APPROVALS:
        raise ConfigError(f"an eval runs unattended: approval must be one of {APPROVALS}, "
                          f"not {options.get('approval')!r}")
    # Each task starts from its own workspace folder, copied as it is (never as part of a repository
    # that happens to hold the suite).
    source = Source(workspace=task.workspace, size=folder_size(task.workspace))
    after = functools.partial(check_task, str(task.folder), check_time_limit)
    return TaskSpec(index=index, prompt=task.prompt, workspace=str(folder), batch_id=batch_id, source=source,
                    agent_options=options, concurrency=concurrency,
                    time_limit=time_limit or task.time_limit, after=after)


def check_task(task_folder: str, time_limit: float, workspace: Path, row: dict[str, Any]) -> dict[str, Any]:
    """Batch's after-hook: the task's check on the finished copy, given the agent's final answer."""
    return run_check(Path(task_folder), workspace, row.get("text") or "", time_limit=time_limit)


def _eval_row(planned: tuple[Arm, int, Task], row: dict[str, Any], time_limit: float | None,
              offline: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """``offline``: the labels of the arms the offline model answers, whose cost is known: nothing."""
    arm, run, task = planned
    check_seconds = float(row.get("check_seconds") or 0.0)
    cost = row.get("cost")
    if cost is None and arm.label in offline:
        cost = 0.0
    return {
        "task": task.name, "model": arm.label, "run": run, "passed": bool(row.get("passed")),
        "reason": "" if row.get("passed") else _reason(row, time_limit or task.time_limit), "end": row.get("reason"),
        "steps": row.get("steps", 0), "tool_calls": row.get("tool_calls", 0),
        "input_tokens": row.get("input_tokens", 0), "cached_tokens": row.get("cached_tokens", 0),
        "output_tokens": row.get("output_tokens", 0), "cost": cost,
        "seconds": max(0.0, float(row.get("seconds") or 0.0) - check_seconds), "session_id": row.get("session_id"),
        "config": arm.config, "check_seconds": check_seconds, "error": row.get("error"),
        "tags": ",".join(task.tags),
    }


def _reason(row: dict[str, Any], time_limit: float) -> str:
    """Why a task failed, in one line: how the agent ended (when not done) and what the check said."""
    parts = []
    end = row.get("reason")
    if end == "timeout":
        parts.append(f"timed out after {time_limit:g} s")
    elif end not in ("done", None):
        parts.append(f"agent ended with {end}")
    if row.get("error"):
        parts.append(str(row["error"]).splitlines()[0][:300])
    if "passed" in row:
        parts.append(f"check failed: {row.get('check_reason') or 'no reason given'}")
    else:
        parts.append("the check did not run")
    return "; ".join(parts)


def _out_folder(out: str | Path | None) -> Path:
    if out is None:
        out = Path("nbagent-eval") / dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = Path(out).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run_info(suite: Suite, arms: list[Arm], repeat: int, folder: Path, batch_id: str) -> dict[str, Any]:
    """What the report states about the run: the suite and its version, the models and endpoints."""
    return {"suite": suite.name, "suite_version": suite.version, "suite_digest": suite_digest(suite),
            "tasks": [t.name for t in suite.tasks], "repeat": repeat, "out": str(folder), "eval_id": batch_id,
            "nbagent_version": _nbagent_version(), "started": dt.datetime.now().isoformat(timespec="seconds"),
            "arms": [describe_arm(arm) for arm in arms]}


def _nbagent_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jupyter-nbagent")  # the distribution's name (nbagent on the index is another project)
    except PackageNotFoundError:  # run from a source tree
        return "unknown (jupyter-nbagent is not installed)"


def describe_arm(arm: Arm) -> dict[str, Any]:
    """The label, model, endpoint and whether it is the offline model (whose score is a floor)."""
    from ..render.redaction import public_url, scrub

    model, endpoint, offline = resolve_model(arm.options)
    shown = {k: v for k, v in arm.options.items() if k not in ("api_key", "model", "base_url")}
    # report.html and run.json are meant to be shared: no credentials or query secrets in a URL, and
    # every other option scrubbed (an embeddings URL, a server's headers)
    return {"label": arm.label, "model": model, "endpoint": endpoint if offline else public_url(endpoint),
            "offline": offline, "config": arm.config,
            "options": {k: public_url(v) if k.endswith("url") and isinstance(v, str) else scrub(str(v))
                        for k, v in shown.items()}}


def resolve_model(options: dict[str, Any]) -> tuple[str, str, bool]:
    """The model and endpoint ``options`` come to (environment included), and whether it is the offline one."""
    from ..config import AgentConfig
    from ..model.factory import uses_local

    known = {k: v for k, v in options.items() if k in {f.name for f in fields(AgentConfig)}}
    try:
        config = AgentConfig.load(**known)
    except Exception as exc:  # noqa: BLE001 - options the agents will refuse: their rows say so
        return str(options.get("model")), f"(options refused: {exc})", False
    if uses_local(config):
        from ..model.local import MODEL_NAME

        return config.model or MODEL_NAME, "offline (llama.cpp on this machine)", True
    return config.model or "(endpoint default)", config.base_url or "https://api.openai.com/v1", False


def suite_digest(suite: Suite) -> str:
    """A short hash of the chosen tasks' files: two runs with the same digest ran the same tasks."""
    digest = hashlib.sha256()
    for task in suite.tasks:
        for path in sorted(p for p in task.folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(path.relative_to(suite.folder).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
