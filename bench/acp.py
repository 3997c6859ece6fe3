"""``nbagent acp``: how soon an editor hears back, and what the agent adds to the model's first token.

    .venv/bin/python bench/acp.py [--starts 10] [--runs 30]

``guard()`` gives both figures to bench/guard.py in smaller doses (8 starts, 25 runs).

Part 1: from starting ``python -m nbagent.cli acp`` to reading its ``initialize`` answer on the pipe
(a fresh process each time, as an editor starts it), beside a fresh interpreter that only imports nbagent,
interleaved. Goal: at most 500 ms (median).

Part 2: from writing a ``session/prompt`` to reading the first ``agent_message_chunk`` notification, against
the time a bare ``openai`` client waits for the first token of the same scripted reply from the same
scripted server; interleaved runs, medians. The client side is raw JSON lines on the pipes, so what is
measured is the agent. Goal: at most 5 ms added over the model's own first token. For reference, the same
turn through nbagent in the bench's own process (Agent.stream), interleaved with the other two.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time

from nbagent.testing.server import ScriptedServer

REPLY = "Hello there, a short answer."
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": 1, "clientCapabilities": {}}}


def _env(server: ScriptedServer | None, home: str) -> dict[str, str]:
    env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_DATA_HOME": f"{home}/.local"}
    if server is not None:
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-bench", NBAGENT_MODEL="scripted-model",
                   NBAGENT_MEMORY="0")
    return env


async def _spawn(env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "nbagent.cli", "acp", env=env,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL, limit=1 << 24)


def _send(proc: asyncio.subprocess.Process, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())


async def _answer(proc: asyncio.subprocess.Process, request_id: int, on_message=None) -> dict:
    assert proc.stdout is not None
    while True:
        message = json.loads(await proc.stdout.readline())
        if on_message is not None:
            on_message(message)
        if message.get("id") == request_id and "method" not in message:
            return message


async def _stop(proc: asyncio.subprocess.Process) -> None:
    proc.terminate()
    await proc.wait()


async def start_to_initialize(home: str) -> float:
    started = time.perf_counter()
    proc = await _spawn(_env(None, home))
    _send(proc, INITIALIZE)
    await _answer(proc, 0)
    elapsed = (time.perf_counter() - started) * 1000
    await _stop(proc)
    return elapsed


async def import_only(home: str) -> float:
    """The floor under part 1: a fresh interpreter that only imports nbagent (the package ``nbagent acp`` is in)."""
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "import nbagent", env=_env(None, home))
    await proc.wait()
    return (time.perf_counter() - started) * 1000


async def part_one(starts: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as home:
        await start_to_initialize(home)  # the first start also fills the file system's caches
        ours, floor = [], []
        for _ in range(starts):
            ours.append(await start_to_initialize(home))
            floor.append(await import_only(home))
        return statistics.median(ours), statistics.median(floor)


async def first_token_bare(client) -> float:
    started = time.perf_counter()
    stream = await client.chat.completions.create(model="scripted-model", messages=[{"role": "user", "content": "hi"}],
                                                  stream=True, stream_options={"include_usage": True})
    first = None
    async for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter() - started
    assert first is not None
    return first * 1000


async def first_chunk_acp(proc: asyncio.subprocess.Process, session_id: str, request_id: int) -> float:
    first: list[float] = []

    def seen(message: dict) -> None:
        update = (message.get("params") or {}).get("update") or {}
        if not first and update.get("sessionUpdate") == "agent_message_chunk":
            first.append(time.perf_counter())

    started = time.perf_counter()
    _send(proc, {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt",
                 "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}})
    answer = await _answer(proc, request_id, seen)
    assert answer["result"]["stopReason"] == "end_turn" and first, answer
    return (first[0] - started) * 1000


def first_text_in_process(agent) -> float:
    """The same turn through nbagent in this process (Agent.stream): what the engine itself adds."""
    from nbagent import events as ev

    started, first = time.perf_counter(), None
    for event in agent.stream("hi"):
        if first is None and isinstance(event, ev.TextDelta):
            first = time.perf_counter() - started
    assert first is not None
    return first * 1000


async def part_two(runs: int) -> tuple[float, float, float]:
    import openai

    from nbagent import Agent

    bare, ours, engine = [], [], []
    with ScriptedServer() as server, tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        server.enqueue(*[REPLY for _ in range(3 * runs + 9)])
        client = openai.AsyncOpenAI(base_url=server.url, api_key="sk-bench", max_retries=0)
        agent = Agent(workspace=ws, model="scripted-model", base_url=server.url, api_key="sk-bench", memory=False)
        proc = await _spawn(_env(server, home))
        try:
            _send(proc, INITIALIZE)
            await _answer(proc, 0)
            _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": ws, "mcpServers": []}})
            session_id = (await _answer(proc, 1))["result"]["sessionId"]
            for i in range(2):  # warm every path
                await first_token_bare(client)
                await asyncio.to_thread(first_text_in_process, agent)
                await first_chunk_acp(proc, session_id, 10 + i)
            for i in range(runs):
                bare.append(await first_token_bare(client))
                engine.append(await asyncio.to_thread(first_text_in_process, agent))
                ours.append(await first_chunk_acp(proc, session_id, 100 + i))
        finally:
            await client.close()
            await _stop(proc)
            agent.close()
    return statistics.median(bare), statistics.median(ours), statistics.median(engine)


def guard() -> list[tuple[str, float, str, bool]]:
    """The two figures for bench/guard.py, in small doses (about 35 s): (name, value, goal text, ok)."""
    started, _ = asyncio.run(part_one(8))
    bare, ours, _ = asyncio.run(part_two(25))
    added = ours - bare
    return [("ACP start to initialize answer (ms)", started, "<= 500 ms", started <= 500),
            ("ACP first chunk added over the model's first token (ms)", added, "<= 5 ms added", added <= 5)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    started, floor = asyncio.run(part_one(args.starts))
    print(f"Start to initialize answer, median of {args.starts} starts: {started:.0f} ms   goal: <= 500 ms   "
          f"ratio to goal: {started / 500:.2f}   (python -c 'import nbagent' alone, interleaved: {floor:.0f} ms)")
    bare, ours, engine = asyncio.run(part_two(args.runs))
    added = ours - bare
    print(f"session/prompt to first agent_message_chunk, median of {args.runs} interleaved runs (ms)")
    print(f"bare openai client's first token: {bare:.2f}   nbagent acp: {ours:.2f}   added: {added:.2f}   "
          f"goal: <= 5 ms added   ratio to goal: {added / 5:.2f}")
    print(f"for reference, nbagent in this process (Agent.stream, first text_delta): {engine:.2f}   "
          f"added over the bare client: {engine - bare:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
