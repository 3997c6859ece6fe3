"""The loop's own overhead per step, and the time to the first text_delta against a bare client.

    .venv/bin/python bench/overhead.py [--steps 200] [--runs 5]

Part 1: a 200-step scripted session with a trivial tool. Overhead per step = wall time minus the
time spent inside the model's stream and inside the tool. Measured with a 10-message and a
2,000-message history, with sessions in memory and persisted to SQLite (the default), beside the
peers run in this same process on the same session (bench/peers.py: openai-agents, pydantic-ai,
mini-swe-agent, each with its own scripted model; `pip install -e '.[bench]'`).
Goal: at most 1 ms per step, flat as history grows.

Part 2: time from request to the first streamed text, through nbagent vs a bare `openai` client
call, both against the same scripted HTTP server (in a process of its own, as a provider is),
interleaved in one run. Goal: at most 1.5 ms added.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/peers.py

from nbagent import Agent, function_tool
from nbagent import events as ev
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

from peers import TOOL_TIME, fresh_heap, history, noop, now  # the same tool, history and clock as the peers get

class TimedModel(ScriptedModel):
    """A ScriptedModel that adds up the time spent inside its own stream."""

    model_time = 0.0

    async def stream(self, request):
        inner = super().stream(request).__aiter__()
        while True:
            started = now()
            try:
                chunk = await inner.__anext__()
            except StopAsyncIteration:
                self.model_time += now() - started
                return
            self.model_time += now() - started
            yield chunk


def one_session(steps: int, prior: int, persist: bool) -> float:
    replies = [Reply(tool_calls=[Call("noop", {"value": i})]) for i in range(steps)] + [Reply(text="done")]
    model = TimedModel(replies, chunk_size=1000)
    with tempfile.TemporaryDirectory() as ws:
        agent = Agent(workspace=ws, model=model, tools=[function_tool(noop, read_only=True)], persist=persist,
                      max_steps=steps + 1, memory=False, compact_threshold=10**9)
        try:
            if prior:
                agent.session.append(history(prior))
            fresh_heap()
            TOOL_TIME[0] = 0.0
            started = now()
            result = agent.run("go")
            wall = now() - started
        finally:
            agent.close()
    assert result.reason == "done" and len(result.tool_calls) == steps, result.reason
    return (wall - model.model_time - TOOL_TIME[0]) / (steps + 1) * 1000


def part_one(steps: int, runs: int) -> dict[tuple[int, bool], float]:
    medians = {}
    for persist in (False, True):
        for prior in (10, 2000):
            samples = [one_session(steps, prior, persist) for _ in range(runs)]
            medians[(prior, persist)] = statistics.median(samples)
    return medians


def peer_medians(steps: int, runs: int) -> dict[str, tuple[float, float] | str]:
    """Each peer's median overhead at 10 and 2,000 messages, or why it did not run."""
    import peers

    out: dict[str, tuple[float, float] | str] = {}
    for name, missing in peers.available().items():
        if missing:
            out[name] = missing
            continue
        run = peers.PEERS[name]
        out[name] = tuple(statistics.median(run(steps, prior) for _ in range(runs)) for prior in (10, 2000))
    return out


async def first_text_bare(client, model: str) -> float:
    started = now()
    stream = await client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hi"}], stream=True,
        stream_options={"include_usage": True})
    first = None
    async for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = now() - started
    return first * 1000


def first_text_agent(agent: Agent) -> float:
    started = now()
    first = None
    for event in agent.stream("hi"):
        if first is None and isinstance(event, ev.TextDelta):
            first = now() - started
    return first * 1000


SERVE = """
import sys
from nbagent.testing.server import ScriptedServer
server = ScriptedServer(*["Hello there, a short answer."] * int(sys.argv[1])).start()
print(server.url, flush=True)
sys.stdin.read()  # until the bench closes it
server.close()
"""


@contextlib.contextmanager
def server_process(replies: int) -> Iterator[str]:
    """The scripted server in a process of its own, as a provider is: its work on a request (reading
    nbagent's longer one, the prompt cache, the usage) is neither on our threads nor on our CPU clock."""
    proc = subprocess.Popen([sys.executable, "-c", SERVE, str(replies)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)


PER_SESSION = 10
"""Turns of part two in one session. In a single session the history, and with it the request nbagent
sends (the bare call sends one message), grew with the number of runs, and so did the figure: 1.4 ms
added at 60 runs, 1.8 ms at 150 (bench/guard.py, December 2026). The history's own cost is the loop's
flatness figure, part one."""


def part_two(runs: int) -> tuple[float, float]:
    import openai

    bare, ours = [], []
    with server_process(2 * runs + 4) as url, tempfile.TemporaryDirectory() as ws:
        agent = Agent(workspace=ws, model="scripted-model", base_url=url, api_key="sk-bench", memory=False)
        loop = asyncio.new_event_loop()
        client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
        try:
            loop.run_until_complete(first_text_bare(client, "scripted-model"))  # warm both paths
            first_text_agent(agent)
            for run in range(runs):
                if run and run % PER_SESSION == 0:
                    agent.new_session()  # untimed: the history stays short however many runs there are
                bare.append(loop.run_until_complete(first_text_bare(client, "scripted-model")))
                ours.append(first_text_agent(agent))
        finally:
            loop.run_until_complete(client.close())
            loop.close()
            agent.close()
    return statistics.median(bare), statistics.median(ours)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--first-text-runs", type=int, default=40)
    args = parser.parse_args()

    medians = part_one(args.steps, args.runs)
    peers = peer_medians(args.steps, args.runs)
    print(f"Loop overhead per step, {args.steps}-step scripted session, median of {args.runs} runs (ms)")
    print(f"{'':34}{'10 msgs':>10}{'2,000 msgs':>12}{'2000/10':>9}")
    for persist, label in ((False, "nbagent, sessions in memory"), (True, "nbagent, sessions in SQLite")):
        small, large = medians[(10, persist)], medians[(2000, persist)]
        print(f"{label:34}{small:>10.3f}{large:>12.3f}{large / small:>9.2f}")
    for name, figures in peers.items():
        if isinstance(figures, str):
            print(f"{name:34}{figures}")
            continue
        small, large = figures
        print(f"{name + ' (in memory)':34}{small:>10.3f}{large:>12.3f}{large / small:>9.2f}")
    ours = (medians[(10, True)], medians[(2000, True)])
    ran = {n: f for n, f in peers.items() if not isinstance(f, str)}
    if ran:
        print("ratios, peer / nbagent in SQLite (10 msgs; 2,000 msgs): "
              + ", ".join(f"{n} {f[0] / ours[0]:.1f}x; {f[1] / ours[1]:.1f}x" for n, f in ran.items()))
    print("goal: <= 1 ms per step, flat as history grows")

    bare, ours = part_two(args.first_text_runs)
    print(f"\nTime to first text, median of {args.first_text_runs} interleaved runs (ms)")
    print(f"bare openai client: {bare:.2f}   nbagent: {ours:.2f}   added: {ours - bare:.2f}   "
          f"ratio: {ours / bare:.2f}x   goal: <= 1.5 ms added")
    return 0


if __name__ == "__main__":
    sys.exit(main())
