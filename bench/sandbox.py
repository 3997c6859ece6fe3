"""The sandbox's cost and what it buys (issue 35), side by side in one run.

    PYTHONPATH=src .venv/bin/python bench/sandbox.py [--calls 40] [--steps 30] [--requests 200]

1. Overhead: the median time of one ``bash`` tool call (``true``) in the sandbox against the same call
   unsandboxed (NBAGENT_SANDBOX=off), alternating; goal: the sandbox adds at most 15 ms (p50).
   The host allow-list's costs beside it (no goal): one allowed HTTP request through the proxy against
   the same request straight to the server (median, a new connection each), and a sandboxed call with
   a host allowed (the proxy's gate and the relay started in the sandbox) against one without.
2. Approvals: a scripted 30-step coding session (write a module and its tests, edit, run the tests,
   read, grep; installs nothing) in "ask" mode and in "sandboxed" mode, every request approved; the
   approvals asked are counted and the workspace's files compared; goal: at least 5x fewer, the same
   files.
3. Hostile workspace: the planted commands of tests/security/test_sandbox.py (write ~/.bashrc, read
   ~/.ssh/id_rsa, reach the network, signal another process, read the environment, remount / as root),
   run through the bash tool in the sandbox; goal: 0 escapes, each result reported as blocked.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import http.client
import http.server
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from nbagent.testing import ScriptedModel, arun_tool, call, calls, close_tool_context, text, tool_context
from nbagent.tools.shell import BASH_TOOL
from nbagent.workspace import sandbox as sb
from nbagent.workspace.net_proxy import Gate, proxy

GOAL_MS = 15.0


def overhead(n: int, hosts: tuple[str, ...] = ()) -> tuple[float, float]:
    """Median ms of a ``bash true`` call, sandboxed (with ``hosts`` allowed) and not."""
    with tempfile.TemporaryDirectory() as tmp:
        ctx = tool_context(tmp, state=False)
        ctx.config.sandbox_hosts = hosts
        times: dict[str, list[float]] = {"bubblewrap": [], "off": []}

        async def one() -> float:
            started = time.perf_counter()
            await arun_tool(ctx, BASH_TOOL, command="true")
            return (time.perf_counter() - started) * 1000

        try:
            for mode in ("bubblewrap", "off"):  # warm both (detection, the scrub patterns)
                os.environ[sb.ENV_VAR] = mode
                asyncio.run(one())
            for _ in range(n):
                for mode in ("bubblewrap", "off"):
                    os.environ[sb.ENV_VAR] = mode
                    times[mode].append(asyncio.run(one()))
        finally:
            os.environ.pop(sb.ENV_VAR, None)
            close_tool_context(ctx)
    return statistics.median(times["bubblewrap"]), statistics.median(times["off"])


class _Quiet(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:
        pass


def proxy_request(n: int) -> tuple[float, float]:
    """Median ms of one HTTP GET (a new connection each) through the proxy's gate, and straight."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    gate = proxy().open(Gate((f"127.0.0.1:{port}",)), unix=False)
    holder = socket.create_connection(("127.0.0.1", gate.port))
    holder.sendall(b"NBAGENT-HOLD\n")  # as a sandboxed process keeps its gate open

    def get(via_proxy: bool) -> float:
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", gate.port if via_proxy else port, timeout=10)
        conn.request("GET", f"http://127.0.0.1:{port}/" if via_proxy else "/")
        assert conn.getresponse().read() == b"ok"
        conn.close()
        return (time.perf_counter() - started) * 1000

    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        for _ in range(5):
            get(True)
            get(False)
        for _ in range(n):
            for via in (True, False):
                times[via].append(get(via))
    finally:
        holder.close()
        server.shutdown()
        server.server_close()
    return statistics.median(times[True]), statistics.median(times[False])


def guard() -> list[tuple[str, float, str, bool]]:
    """For bench/guard.py: the time a sandboxed ``bash`` call adds (p50) against its 15 ms goal, in a
    few seconds; [] where bubblewrap does not work (nothing to measure)."""
    os.environ.setdefault("NBAGENT_LOCAL", "off")
    if sb.current().mechanism != "bubblewrap":
        return []
    boxed, plain = overhead(25)
    added = boxed - plain
    return [("sandboxed bash call adds, p50 ms", added, f"<= {GOAL_MS:g} ms", added <= GOAL_MS)]


def session_script(steps: int) -> list:
    """``steps`` tool calls of a small coding session, then the answer."""
    script = [call("write_file", path="stats.py", content="def mean(xs):\n    return sum(xs) / len(xs)\n"),
              call("write_file", path="test_stats.py",
                   content="from stats import mean\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n")]
    i = 0
    while len(script) < steps:
        i += 1
        script += [call("bash", command="python -m pytest -q -p no:cacheprovider test_stats.py"),
                   call("read_file", path="stats.py"),
                   call("edit_file", path="stats.py", old_string=f"# v{i - 1}\n" if i > 1 else "def mean",
                        new_string=f"# v{i}\n" if i > 1 else f"# v{i}\ndef mean"),
                   call("grep", pattern="def "),
                   call("bash", command="git status --short || true")]
    return [calls(c) for c in script[:steps]] + [text("done")]


def approvals(mode: str, steps: int) -> tuple[int, str]:
    """Approvals asked in ``mode``, and a digest of the files the session left."""
    from nbagent import Agent

    asked: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(workspace=tmp, model=ScriptedModel(session_script(steps)), approval=mode, memory=False,
                      approver=lambda request: asked.append(request.name) or "approve", max_steps=steps + 5)
        try:
            result = agent.run("write mean() with a test, then keep it passing")
            assert result.reason == "done", result.reason
        finally:
            agent.close()
        digest = hashlib.sha256()
        for path in sorted(p for p in Path(tmp).rglob("*") if p.is_file() and ".nbagent" not in p.parts
                           and "__pycache__" not in p.parts):
            digest.update(path.relative_to(tmp).as_posix().encode() + b"\0" + path.read_bytes())
    return len(asked), digest.hexdigest()[:12]


def hostile() -> tuple[int, int, int]:
    """(attempts, escapes, reported as blocked) of the planted commands, run in the sandbox."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / f"nbagent-bench-{uuid.uuid4().hex[:8]}"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEYMARK\n")
    (home / ".bashrc").write_text("# mine\n")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    victim = subprocess.Popen(["sleep", "60"])
    saved = {k: os.environ.get(k) for k in ("HOME", "OPENAI_API_KEY")}
    os.environ.update(HOME=str(home), OPENAI_API_KEY="sk-bench-" + "q" * 30)
    attempts = {"bashrc": "echo evil >> ~/.bashrc", "key": "cat ~/.ssh/id_rsa",
                "network": f"exec 3<>/dev/tcp/127.0.0.1/{server.getsockname()[1]}",
                "signal": f"kill -TERM {victim.pid}", "environment": "printenv OPENAI_API_KEY",
                "remount": "mount -o remount,rw,bind / && touch /nbagent-bench-escaped"}
    outputs = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ctx = tool_context(tmp, state=False)
            try:
                for name, command in attempts.items():
                    outputs[name] = asyncio.run(arun_tool(ctx, BASH_TOOL, command=command))
            finally:
                close_tool_context(ctx)
        try:
            server.accept()
            connected = True
        except BlockingIOError:
            connected = False
        escaped = {"bashrc": "evil" in (home / ".bashrc").read_text(), "key": "KEYMARK" in outputs["key"],
                   "network": connected, "signal": victim.poll() is not None,
                   "environment": "sk-bench-" in outputs["environment"],
                   "remount": Path("/nbagent-bench-escaped").exists()}
    finally:
        victim.kill()
        server.close()
        shutil.rmtree(home, ignore_errors=True)
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    blocked = sum("BLOCKED" in out for out in outputs.values())
    return len(attempts), sum(escaped.values()), blocked


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("NBAGENT_LOCAL", "off")
    box = sb.current()
    print(f"sandbox: {box.describe()}")
    if box.mechanism != "bubblewrap":
        print("bubblewrap does not work here: nothing to measure")
        return
    boxed, plain = overhead(args.calls)
    added = boxed - plain
    print(f"bash call p50: sandboxed {boxed:.1f} ms, unsandboxed {plain:.1f} ms, added {added:.1f} ms "
          f"(goal <= {GOAL_MS:g} ms: {'met' if added <= GOAL_MS else 'NOT met'}; ratio {boxed / plain:.2f}x)")
    through, straight = proxy_request(args.requests)
    print(f"allowed HTTP request p50: through the proxy {through:.2f} ms, straight {straight:.2f} ms, added "
          f"{through - straight:.2f} ms (ratio {through / straight:.2f}x; no goal)")
    with_host, _ = overhead(max(args.calls // 2, 5), hosts=("pypi.org",))
    print(f"bash call p50 with a host allowed (gate + relay): {with_host:.1f} ms, {with_host - boxed:+.1f} ms over "
          "the sandboxed call without (paid only when sandbox_hosts is set; no goal)")
    asked_ask, files_ask = approvals("ask", args.steps)
    asked_box, files_box = approvals("sandboxed", args.steps)
    ratio = "inf" if asked_box == 0 else f"{asked_ask / asked_box:.1f}x"
    print(f"{args.steps}-step session approvals: ask {asked_ask}, sandboxed {asked_box} ({ratio} fewer; goal >= 5x: "
          f"{'met' if asked_box * 5 <= asked_ask else 'NOT met'}); files {files_ask} vs {files_box} "
          f"({'same' if files_ask == files_box else 'DIFFERENT'})")
    attempts, escapes, blocked = hostile()
    print(f"hostile workspace: {attempts} attempts, {escapes} escapes (goal 0), {blocked} reported as blocked")


if __name__ == "__main__":
    main()
