"""``nbagent batch tasks.csv --prompt "..." --out results.csv``: a batch run from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import BATCH_MODES
from ..errors import ConfigError


def add_batch_parser(sub, parents=()) -> None:
    p = sub.add_parser("batch", help="run many prompts, each in its own copy of the workspace",
                       parents=list(parents),
                       description="Each row of TASKS (a CSV file, or a text file with one prompt a line) "
                                   "runs as its own session in its own copy of the workspace.")
    p.add_argument("tasks", help="CSV file (its columns fill --prompt, or a 'prompt' column) or a .txt file")
    p.add_argument("--prompt", "-p", help="template filled from each row, e.g. 'Summarise {path}'")
    p.add_argument("--out", "-o", required=True, help="where to write the results (.csv, .json or .parquet)")
    p.add_argument("--approval", choices=BATCH_MODES, required=True,
                   help="what tools may do: a batch never asks (what would ask is denied), so choose auto, "
                        "sandboxed (commands in the sandbox, file changes; nothing that leaves it) or read-only")
    p.add_argument("--concurrency", "-j", type=int, default=4, help="tasks at once (default 4)")
    p.add_argument("--scheduler", help="a Dask scheduler address (tcp://host:8786) to run the tasks on")
    p.add_argument("--git-url", help="a repository the workers clone instead of reading the workspace "
                                     "(https://, ssh://, git://, file:// or user@host:path)")
    p.add_argument("--revision", help="with --git-url: the branch, tag or commit to start from "
                                      "(default: the workspace's HEAD)")
    p.add_argument("--model", "-m", help="model name (env NBAGENT_MODEL)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)")
    p.add_argument("--toolsets", help="comma-separated tool sets (core is always on)")
    p.add_argument("--max-steps", type=int, help="model calls per task (default 50)")
    p.set_defaults(handler=run_batch_command)


def read_tasks(path: Path, prompt: str | None):
    """The tasks and template of a tasks file: a CSV table, or one prompt per line of a text file."""
    import pandas as pd

    if not path.is_file():
        raise ConfigError(f"no tasks file at {path}")
    if path.suffix.lower() in (".txt", ".md"):
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return lines, prompt
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as exc:
        raise ConfigError(f"{path} is not a CSV table: {exc}") from None
    if prompt is None:
        if "prompt" not in table.columns:
            raise ConfigError(f"{path} has no 'prompt' column: give --prompt 'template with {{column}}'")
        return list(table["prompt"]), None
    return table, prompt


def write_results(frame, out: Path) -> None:
    suffix = out.suffix.lower()
    if suffix == ".json":
        frame.to_json(out, orient="records", indent=1)
    elif suffix == ".parquet":
        frame.to_parquet(out)
    else:
        frame.to_csv(out, index=False)


def run_batch_command(args: argparse.Namespace) -> int:
    from ..batching import batch

    tasks, template = read_tasks(Path(args.tasks), args.prompt)
    client = None
    if args.scheduler:
        from dask.distributed import Client

        client = Client(args.scheduler)
    options = {k: v for k, v in dict(model=args.model, base_url=args.base_url, toolsets=args.toolsets,
                                      max_steps=args.max_steps).items() if v is not None}
    try:
        frame = batch(tasks, prompt=template, workspace=getattr(args, "workspace", None) or ".",
                      concurrency=args.concurrency, client=client, approval=args.approval,
                      git_url=args.git_url, revision=args.revision, **options)
    finally:
        if client is not None:
            client.close()
    write_results(frame, Path(args.out))
    failed = sum(1 for error in frame["error"] if isinstance(error, str))
    print(f"{len(frame)} tasks, {failed} failed; results in {args.out}", file=sys.stderr)
    return 0 if failed == 0 else 1
