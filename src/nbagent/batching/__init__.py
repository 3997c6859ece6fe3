"""Batch runs: many prompts, each its own session in its own copy of the workspace, as one DataFrame.

    import nbagent
    df = nbagent.batch(["Add type hints to utils.py", "Write tests for io.py"],
                       workspace=".", approval="auto")
    df = nbagent.batch(files_df, prompt="Summarise {path}", workspace=".", approval="read-only",
                       client=dask_client)

Local runs use asyncio with a semaphore (``concurrency`` tasks at once); with ``client=`` a
``dask.distributed.Client`` the tasks run on its workers (which need nbagent, and the workspace on a
shared filesystem or ``git_url=`` a repository they clone) and stream back as they finish. See
docs/batch.md.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ConfigError
from ..ids import short_id
from . import scratch
from .isolation import Source, folder_size, git, repository_top, snapshot
from .progress import Progress, default_progress
from .schedule import run_distributed, run_local
from .remote import RemoteSource, check_url, remove_batch_copies, resolve_revision
from .task import BATCH_APPROVALS, TaskSpec, batch_dir, close_stores, import_session

COLUMNS = ["task", "prompt", "text", "reason", "tool_calls", "input_tokens", "output_tokens", "cost",
           "files_changed", "diff", "session_id", "error", "seconds", "host", "pid"]

__all__ = ["COLUMNS", "Source", "TaskSpec", "batch", "folder_size", "prompts_from", "run_specs"]


def batch(tasks: Any, *, prompt: str | None = None, workspace: str | Path, concurrency: int = 4,
          client: Any = None, progress: Callable[[int, int, dict], None] | bool | None = None,
          git_url: str | None = None, revision: str | None = None, **agent_options: Any):
    """Run every task as its own session in its own copy of ``workspace``; a DataFrame, one row a task.

    ``tasks`` is a list of prompts, or a DataFrame (or list of dicts) whose rows fill the template
    ``prompt`` (``"Summarise {path}"``). ``approval`` must be given: "auto", "sandboxed" or "read-only"
    (a batch never waits on a prompt; anything that would still ask is denied). Other keyword arguments go
    to each ``Agent`` (model, base_url, toolsets, max_steps, ...). A failed task is a row with
    ``error`` set, never an exception that loses the finished ones.

    ``git_url`` (with ``revision``: a branch, tag or commit; by default the workspace's HEAD, or the
    remote's HEAD when the workspace is not a repository) makes every task start from that commit,
    cloned once per worker machine, instead of from a snapshot of ``workspace``; the sessions still
    end up in ``workspace``.
    """
    import pandas as pd

    approval = agent_options.get("approval")
    if approval not in BATCH_APPROVALS:
        raise ConfigError(f"batch runs need an explicit approval mode, approval='auto', 'sandboxed' or "
                          f"'read-only' (got {approval!r}): a batch never waits on a prompt")
    if concurrency < 1:
        raise ConfigError("concurrency must be at least 1")
    root = Path(workspace).expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(f"workspace {root} is not a directory")
    texts = prompts_from(tasks, prompt)
    batch_id = short_id("batch_")
    remote = _remote(git_url, revision, root) if git_url is not None else None
    # every task starts from the same files, even if the user edits meanwhile
    source = snapshot(root) if remote is None else None
    specs = [TaskSpec(index=i, prompt=text, workspace=str(root), batch_id=batch_id, source=source,
                      agent_options=dict(agent_options), remote=remote, concurrency=concurrency)
             for i, text in enumerate(texts)]
    rows = run_specs(root, specs, concurrency=concurrency, client=client, progress=progress)
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs["batch_id"] = batch_id
    return frame


def run_specs(root: Path, specs: list[TaskSpec], *, concurrency: int = 4, client: Any = None,
              progress: Callable[[int, int, dict], None] | bool | None = None) -> list[dict[str, Any]]:
    """Run tasks already described (one batch: the same ``batch_id`` and ``workspace``, each with its
    own source and options), then clean up; their rows, sorted by task. What ``batch`` runs, and what
    ``nbagent.eval`` runs with a task's own workspace and check per spec."""
    if not specs:
        return []
    batch_id, remote = specs[0].batch_id, specs[0].remote
    report = _progress(progress, len(specs))
    try:
        if client is not None:
            rows = run_distributed(client, specs, concurrency, report)
        else:
            rows = run_local(specs, concurrency, report)
    finally:
        report.close()
        _clean_up(root, batch_id, remote, client)
    for row in rows:
        import_session(root, row)
    rows.sort(key=lambda r: r["task"])
    return rows


def prompts_from(tasks: Any, template: str | None) -> list[str]:
    """The prompt of every task: the strings themselves, or each row filling ``template``."""
    records = _records(tasks)
    if template is None:
        bad = [i for i, r in enumerate(records) if not isinstance(r, str)]
        if bad:
            raise ConfigError(f"task {bad[0]} is not a prompt string: rows of a table need prompt='...{{column}}...'")
        return list(records)
    out = []
    for i, record in enumerate(records):
        values = record if isinstance(record, dict) else {"task": record}
        try:
            out.append(template.format_map(values))
        except KeyError as exc:
            raise ConfigError(f"the prompt template names {exc.args[0]!r}, which task {i} does not have "
                              f"(columns: {', '.join(map(str, values))})") from None
        except (ValueError, IndexError, AttributeError) as exc:
            raise ConfigError(f"the prompt template cannot be filled for task {i}: {exc}") from None
    return out


def _records(tasks: Any) -> Sequence[Any]:
    if hasattr(tasks, "to_dict") and hasattr(tasks, "columns"):
        return [{str(k): v for k, v in row.items()} for row in tasks.to_dict("records")]
    if isinstance(tasks, (str, bytes)):
        raise ConfigError("tasks must be a list of prompts or a DataFrame, not one string")
    return list(tasks)


def _progress(progress: Any, total: int) -> Progress:
    if progress is None or progress is True:
        return default_progress(total)
    if progress is False:
        return Progress(total)
    return Progress(total, callback=progress)


def _remote(git_url: str, revision: str | None, root: Path) -> RemoteSource:
    """The URL checked, the commit every task starts from, the workspace's folder in the repository."""
    url = check_url(git_url)
    top = repository_top(root)
    subdir = root.relative_to(top).as_posix() if top is not None and root != top else ""
    if revision is None and top is not None:
        revision = git(top, "rev-parse", "HEAD").strip()
    return RemoteSource(url=url, commit=resolve_revision(url, revision), subdir=subdir)


def _clean_up(root: Path, batch_id: str, remote: RemoteSource | None, client: Any) -> None:
    """Remove every copy of this batch, including those of a task whose worker died, and close the
    connection its tasks kept to the workspace's database."""
    close_stores(batch_id)
    scratch.remove_batch(batch_id)
    if client is not None:
        client.run(close_stores, batch_id)
        client.run(scratch.remove_batch, batch_id)
    if remote is not None:
        remove_batch_copies(batch_id)
        if client is not None:
            client.run(remove_batch_copies, batch_id)
        return
    try:
        folder = batch_dir(root, batch_id)
    except OSError:  # .nbagent is not a real folder (refused): no copy was ever made there
        return
    shutil.rmtree(folder, ignore_errors=True)
