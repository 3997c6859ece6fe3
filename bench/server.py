"""Events per second through the session WebSocket, and the Jupyter server's event-loop lag meanwhile.

    .venv/bin/python bench/server.py [--events 10000] [--runs 3]

A real ``jupyter-server`` subprocess runs the nbagent extension; its agents play a ScriptedModel
that streams one long answer as fast as it can (``--events`` text deltas, the worst case for the
server). A probe extension loaded next to it samples the IOLoop's lag every 5 ms (how late a 5 ms
sleep wakes up). The clients are tornado WebSocket clients in this process.

Reported, as medians of ``--runs``:
- events per second delivered to each client, with 1 and with 5 clients on one session, against
  the reference: the same turn consumed in-process by ``Agent.subscribe`` (no server, no socket);
- the server loop's lag while the turn streams (p50, p99, max) against the idle server's lag.
Goal: p99 lag under 20 ms while streaming.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from nbagent import Agent
from nbagent.testing.replies import Reply, Slow
from nbagent.testing.scripted import ScriptedModel

TOKEN = "bench-token"
LAG_GOAL_MS = 20.0

PROBE = '''
"""Bench-only server extension: samples the IOLoop's lag; GET /bench/lag returns and resets them."""
import asyncio, json, time
from jupyter_server.base.handlers import APIHandler
from tornado import web

SAMPLES = []
GC = []
import gc
_gc_start = [0.0]
def _gc_watch(phase, info):
    if phase == "start":
        _gc_start[0] = time.perf_counter()
    elif info["generation"] == 2:
        GC.append((time.perf_counter() - _gc_start[0]) * 1000)
gc.callbacks.append(_gc_watch)

async def _probe(interval=0.005):
    while True:
        t0 = time.perf_counter()
        await asyncio.sleep(interval)
        SAMPLES.append((time.perf_counter() - t0 - interval) * 1000)

class LagHandler(APIHandler):
    @web.authenticated
    def get(self):
        data = list(SAMPLES)
        SAMPLES.clear()
        if self.get_query_argument("gc", ""):
            data, _ = list(GC), GC.clear()
        self.finish(json.dumps(data))

def _jupyter_server_extension_points():
    return [{"module": "nbagent_bench_probe"}]

def _load_jupyter_server_extension(serverapp):
    serverapp.web_app.add_handlers(".*$", [(serverapp.base_url + "bench/lag", LagHandler)])
    asyncio.get_event_loop().create_task(_probe())

def model_factory(session_id):
    """One answer per session: the prompt says how many deltas and the pause before each (ms)."""
    from nbagent.testing.replies import Reply, Slow
    from nbagent.testing.scripted import ScriptedModel

    def answer(request):
        events, pause_ms = (int(x) for x in request.messages[-1]["content"].split())
        reply = Reply(text="x" * events)
        return Slow(pause_ms / 1000, reply) if pause_ms else reply

    return ScriptedModel([answer], chunk_size=1)
'''

CONFIG = '''
import nbagent_bench_probe
c.ServerApp.jpserver_extensions = {"nbagent.jupyter.server": True, "nbagent_bench_probe": True}
c.NbAgentServer.model_factory = nbagent_bench_probe.model_factory
c.NbAgentServer.agent_options = {"memory": False}
'''


SCENARIOS = [("as fast as the model can stream", "events", 0), ("paced: 1 ms before each delta", "paced_events", 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000, help="deltas of the unpaced turn")
    parser.add_argument("--paced-events", type=int, default=3_000, help="deltas of the paced turn")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp))
        try:
            asyncio.run(measure(server, args))
        finally:
            server["proc"].terminate()
            server["proc"].wait(10)


def start_server(tmp: Path) -> dict:
    (tmp / "probe").mkdir()
    (tmp / "probe" / "nbagent_bench_probe.py").write_text(PROBE)
    (tmp / "config").mkdir()
    (tmp / "config" / "jupyter_server_config.py").write_text(CONFIG)
    (tmp / "root").mkdir()
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp / "config"), "NBAGENT_LOCAL": "off",
           "PYTHONPATH": os.pathsep.join([str(tmp / "probe"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter-server"), "--no-browser", "--allow-root",
         "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={TOKEN}",
         f"--ServerApp.root_dir={tmp / 'root'}", "--ServerApp.log_level=WARN"],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp / "server.log", "w"),
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("jupyter-server did not start:\n" + (tmp / "server.log").read_text()[-2000:])
            time.sleep(0.2)
    return {"proc": proc, "url": url, "port": port}


async def measure(server: dict, args) -> None:
    http = AsyncHTTPClient()
    await asyncio.sleep(1.0)
    await lag_samples(http, server)
    await asyncio.sleep(2.0)
    idle = await lag_samples(http, server)
    print(f"nbagent server bench: median of {args.runs} runs; clients are WebSocket clients in this process\n")
    print(f"server loop lag while idle (reference): p50 {pct(idle, .5):.2f} ms, p99 {pct(idle, .99):.2f} ms, "
          f"max {max(idle):.2f} ms ({len(idle)} samples)")
    for title, attr, pause_ms in SCENARIOS:
        events = getattr(args, attr)
        rates: dict[int, list[float]] = {1: [], 5: []}
        lags: dict[int, list[float]] = {1: [], 5: []}
        for _ in range(args.runs):
            for n in (1, 5):
                per_client, lag = await one_turn(http, server, n, f"{events} {pause_ms}")
                rates[n].append(statistics.median(per_client))
                lags[n] += lag
        reference = statistics.median(in_process_rate(events, pause_ms) for _ in range(args.runs))
        report(f"{title} ({events} text deltas)", rates, lags, reference)


async def one_turn(http, server: dict, clients: int, prompt: str) -> tuple[list[float], list[float]]:
    sid = json.loads((await api(http, server, "POST", "sessions", "{}")).body)["id"]
    sockets = [await websocket_connect(
        f"ws://127.0.0.1:{server['port']}/nbagent/api/sessions/{sid}/ws?token={TOKEN}") for _ in range(clients)]
    for ws in sockets:
        assert json.loads(await ws.read_message())["type"] == "snapshot"
    await lag_samples(http, server)  # drop what came before the turn
    await sockets[0].write_message(json.dumps({"type": "prompt", "text": prompt}))
    per_client = await asyncio.gather(*(read_turn(ws) for ws in sockets))
    lag = await lag_samples(http, server)
    for ws in sockets:
        ws.close()
    return per_client, lag


async def read_turn(ws) -> float:
    """Text deltas per second on one client, first delta to turn_end."""
    count, first = 0, None
    while True:
        for line in (await ws.read_message()).split("\n"):  # one event per line
            event = json.loads(line)
            if event["type"] == "text_delta":
                count += 1
                first = first or time.perf_counter()
            elif event["type"] == "turn_end":
                return count / (time.perf_counter() - first)


def in_process_rate(events: int, pause_ms: int) -> float:
    """The reference: the same turn's deltas as an in-process subscriber receives them (no server)."""
    done = threading.Event()
    stamps: list[float] = []

    def on_event(event) -> None:
        if event.type == "text_delta":
            stamps.append(time.perf_counter())
        elif event.type == "turn_end":
            done.set()

    reply = Reply(text="x" * events)
    with tempfile.TemporaryDirectory() as root:
        agent = Agent(workspace=root, model=ScriptedModel([Slow(pause_ms / 1000, reply) if pause_ms else reply],
                                                          chunk_size=1), persist=False, memory=False)
        agent.subscribe(on_event)
        agent.submit("stream")
        done.wait(300)
        agent.close()
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


async def api(http, server: dict, method: str, path: str, body: str | None = None):
    return await http.fetch(HTTPRequest(f"{server['url']}/nbagent/api/{path}", method=method, body=body,
                                        headers={"Authorization": f"token {TOKEN}"}))


async def lag_samples(http, server: dict) -> list[float]:
    response = await http.fetch(HTTPRequest(f"{server['url']}/bench/lag",
                                            headers={"Authorization": f"token {TOKEN}"}))
    return json.loads(response.body)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(title: str, rates, lags, reference: float) -> None:
    print(f"\n{title}")
    print(f"  {'events/s per client':28} {'median':>9} {'in-process':>11} {'ratio':>6}   "
          f"{'loop lag ms: p50':>16} {'p99':>7} {'max':>7}")
    for n in (1, 5):
        rate = statistics.median(rates[n])
        p99 = pct(lags[n], .99)
        verdict = "ok" if p99 < LAG_GOAL_MS else "over the goal"
        print(f"  {str(n) + ' client' + 's' * (n > 1):28} {rate:9.0f} {reference:11.0f} {rate / reference:6.2f}   "
              f"{pct(lags[n], .5):16.2f} {p99:7.2f} {max(lags[n]):7.2f}   "
              f"(p99 goal < {LAG_GOAL_MS:.0f} ms: {verdict}; {len(lags[n])} samples)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    main()
