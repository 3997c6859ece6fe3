"""The sandbox's network (issue 35): no network, but the hosts the user allowed, reached through nbagent's
proxy (a real HTTP server on this machine's loopback, named in the allow-list, against one that is not);
a refused host is reported as blocked, and asked about where the agent can ask; the Landlock fallback
holds TCP (connect only to the proxy's port, no bind), signals and its temporary folder."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from nbagent.testing import arun_tool, call, calls, close_tool_context, text, tool_context
from nbagent.tools.shell import BASH_TOOL
from nbagent.workspace import sandbox as sb

pytestmark = pytest.mark.process

needs_bwrap = pytest.mark.skipif(sb.current().mechanism != "bubblewrap", reason="bubblewrap does not work here")
LANDLOCK = sb._detect("landlock")
needs_landlock_net = pytest.mark.skipif(LANDLOCK.mechanism != "landlock" or "network (TCP)" not in LANDLOCK.confines,
                                        reason="no Landlock with TCP rules (ABI 4+) here")


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        body = f"served {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def servers():
    """Two HTTP servers on the host's 127.0.0.1: the first is the allowed "host", the second is not."""
    made = []
    for _ in range(2):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.hits = []  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        made.append(server)
    yield made
    for server in made:
        server.shutdown()
        server.server_close()


def fetch(port: int, path: str = "/x", tunnel: bool = False) -> str:
    """A command fetching http://127.0.0.1:PORT/PATH through the environment's proxy (plain, or a CONNECT
    tunnel as HTTPS takes), printing the status and body."""
    if tunnel:
        code = ("import http.client,os,urllib.parse as u;p=u.urlsplit(os.environ['HTTPS_PROXY']);"
                "c=http.client.HTTPConnection(p.hostname,p.port,timeout=10);"
                f"c.set_tunnel('127.0.0.1',{port});c.request('GET','{path}');r=c.getresponse();"
                "print(r.status,r.read().decode())")
    else:
        code = ("import urllib.request,urllib.error\ntry:\n"
                f" r=urllib.request.urlopen('http://127.0.0.1:{port}{path}',timeout=10);print(r.status,r.read().decode())\n"
                "except urllib.error.HTTPError as e:print(e.code,e.read().decode())")
    return f"{sys.executable} -I -c \"{code}\""


def allow(ctx, *hosts: str) -> None:
    ctx.config.sandbox_hosts = tuple(hosts)


@needs_bwrap
async def test_an_allowed_host_is_reached_through_the_proxy_and_another_is_refused_and_reported(tmp_path, servers):
    allowed, other = (s.server_address[1] for s in servers)
    ctx = tool_context(tmp_path, state=False)
    allow(ctx, f"127.0.0.1:{allowed}")
    try:
        ok = await arun_tool(ctx, BASH_TOOL, command=fetch(allowed, "/plain"))
        tunnelled = await arun_tool(ctx, BASH_TOOL, command=fetch(allowed, "/tunnel", tunnel=True))
        refused = await arun_tool(ctx, BASH_TOOL, command=fetch(other, "/secret") + f" && {fetch(other, '/again')}")
        direct = await arun_tool(ctx, BASH_TOOL, command=f"exec 3<>/dev/tcp/127.0.0.1/{allowed} && echo connected")
    finally:
        close_tool_context(ctx)
    assert "200 served /plain" in ok and "BLOCKED" not in ok
    assert "200 served /tunnel" in tunnelled
    assert servers[0].hits == ["/plain", "/tunnel"]
    assert servers[1].hits == []  # the refused server never heard of it
    assert "403 nbagent sandbox: 127.0.0.1:%d is not on the host allow-list" % other in refused
    assert refused.count(f"[sandbox: BLOCKED network to 127.0.0.1:{other}: not on the user's host allow-list") == 1
    assert "connected" not in direct  # only through the proxy: the sandbox has no network of its own


@needs_bwrap
async def test_without_hosts_there_is_no_proxy_and_no_network(tmp_path, servers):
    port = servers[0].server_address[1]
    ctx = tool_context(tmp_path, state=False)
    try:
        out = await arun_tool(ctx, BASH_TOOL, command=f"env | grep -i ^[a-z]*_proxy=; echo ===; {fetch(port)}")
    finally:
        close_tool_context(ctx)
    assert out.splitlines()[1] == "===", out
    assert "200" not in out and servers[0].hits == []


def test_a_host_not_on_the_list_is_asked_about_with_the_command_and_the_reason(make_agent, tmp_path, servers):
    if sb.current().mechanism != "bubblewrap":
        pytest.skip("bubblewrap does not work here")
    allowed, other = (s.server_address[1] for s in servers)
    asked = []

    def approver(request):
        asked.append(request)
        return {"/yes": "approve", "/no": "deny", "/always": "always"}[request.arguments["command"].split("'")[1]
                                                                       .rpartition(str(other))[2]]

    agent = make_agent(calls(call("bash", command=fetch(other, "/no"))), calls(call("bash", command=fetch(other, "/yes"))),
                       calls(call("bash", command=fetch(other, "/always"))),
                       calls(call("bash", command=fetch(other, "/after"))), text("done"),
                       approval="sandboxed", approver=approver, sandbox_hosts=[f"127.0.0.1:{allowed}"])
    result = agent.run("fetch them")
    outputs = [c["output"] for c in result.tool_calls if c["name"] == "bash"]
    assert [r.name for r in asked] == ["sandbox_network"] * 3  # /after: allowed for the session by "always"
    assert asked[0].arguments["host"] == f"127.0.0.1:{other}"
    assert "not on your host allow-list" in asked[0].arguments["reason"] and "/no" in asked[0].arguments["command"]
    assert "BLOCKED network to 127.0.0.1:%d" % other in outputs[0] and "403" in outputs[0]
    assert ["200 served /yes" in o for o in outputs[1:]] == [True, False, False]
    assert "200 served /always" in outputs[2] and "200 served /after" in outputs[3]
    assert servers[1].hits == ["/yes", "/always", "/after"]
    cards = [e for e in result.events if e.type == "tool_result" and e.name == "sandbox_network"]
    assert [c.status for c in cards] == ["denied", "done", "done"]  # each card ends with its result


def test_hosts_come_from_the_users_settings_never_a_workspace(tmp_path, monkeypatch, capsys):
    from nbagent.cli.app import main
    from nbagent.config import AgentConfig

    (tmp_path / ".nbagent").mkdir()
    (tmp_path / ".nbagent" / "config.json").write_text('{"sandbox_hosts": ["evil.example"]}')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NBAGENT_SANDBOX_HOSTS", "pypi.org, *.pythonhosted.org")
    assert AgentConfig.load(workspace=tmp_path).sandbox_hosts == ("pypi.org", "*.pythonhosted.org")
    if sb.current().active:  # and `nbagent sandbox status` says so
        main(["sandbox", "status"])
        assert "network: only pypi.org, *.pythonhosted.org, through nbagent's proxy" in capsys.readouterr().out
    monkeypatch.delenv("NBAGENT_SANDBOX_HOSTS")
    assert AgentConfig.load(workspace=tmp_path).sandbox_hosts == ()


@needs_landlock_net
async def test_the_landlock_fallback_confines_tcp_signals_and_leaves_no_temporary_folder(tmp_path, servers,
                                                                                       monkeypatch):
    monkeypatch.setenv(sb.ENV_VAR, "landlock")
    tmp_root = Path(tempfile.mkdtemp(prefix="nbagent-tmp-"))
    monkeypatch.setenv("TMPDIR", str(tmp_root))
    allowed, other = (s.server_address[1] for s in servers)
    victim = subprocess.Popen(["sleep", "60"])
    ctx = tool_context(tmp_path, state=False)
    allow(ctx, f"127.0.0.1:{allowed}")
    try:
        ok = await arun_tool(ctx, BASH_TOOL, command=fetch(allowed, "/through"))
        refused = await arun_tool(ctx, BASH_TOOL, command=fetch(other, "/refused"))
        direct = await arun_tool(ctx, BASH_TOOL, command=f"exec 3<>/dev/tcp/127.0.0.1/{other} && echo connected")
        bind = await arun_tool(ctx, BASH_TOOL, command=f"{sys.executable} -I -c \"import socket;"
                                                       "socket.socket().bind(('127.0.0.1',0));print('bound')\"")
        signal = await arun_tool(ctx, BASH_TOOL, command=f"kill -TERM {victim.pid} && echo signalled")
        tmp = await arun_tool(ctx, BASH_TOOL, command="echo $TMPDIR; touch $TMPDIR/left")
    finally:
        close_tool_context(ctx)
        alive = victim.poll() is None
        victim.kill()
        victim.wait()
    assert "200 served /through" in ok and servers[0].hits == ["/through"]
    assert "BLOCKED network to 127.0.0.1:%d" % other in refused and servers[1].hits == []
    assert "connected" not in direct and "Permission denied" in direct
    assert "bound" not in bind
    if "signals" in LANDLOCK.confines:  # ABI 6+
        assert alive and "signalled" not in signal
    private = Path(tmp.splitlines()[1])
    assert private.parent == tmp_root and not private.exists()  # removed when the command ended
    assert list(tmp_root.iterdir()) == []
    os.rmdir(tmp_root)


@pytest.mark.skipif(LANDLOCK.mechanism != "landlock", reason="no Landlock here")
def test_a_killed_launchers_temporary_folder_is_swept_by_the_next(tmp_path):
    from nbagent.workspace.landlock_exec import TMP_PREFIX, sweep

    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = tmp_path / f"{TMP_PREFIX}{gone.pid}-abc"
    (stale / "sub").mkdir(parents=True)
    live = tmp_path / f"{TMP_PREFIX}{os.getpid()}-def"
    live.mkdir()
    old_empty, old_full = tmp_path / f"{TMP_PREFIX}q1w2e3r4", tmp_path / f"{TMP_PREFIX}z9x8c7v6"
    old_empty.mkdir()
    old_full.mkdir()
    (old_full / "kept").write_text("x")
    sweep(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, old_full.name])


def test_a_card_still_waiting_when_its_command_ends_is_closed(make_agent, tmp_path, servers):
    if sb.current().mechanism != "bubblewrap":
        pytest.skip("bubblewrap does not work here")
    import asyncio

    allowed, other = (s.server_address[1] for s in servers)

    async def never_answers(request):
        await asyncio.Event().wait()

    quick = fetch(other, "/late").replace("timeout=10", "timeout=1")  # the client gives up first
    agent = make_agent(calls(call("bash", command=quick)), text("done"), approval="sandboxed",
                       approver=never_answers, sandbox_hosts=[f"127.0.0.1:{allowed}"])
    result = agent.run("fetch it")
    assert result.reason == "done"
    cards = [e for e in result.events if e.type == "tool_result" and e.name == "sandbox_network"]
    assert [c.status for c in cards] == ["interrupted"] and "stayed blocked" in cards[0].output
    assert agent.snapshot().approvals == () and servers[1].hits == []
    assert "BLOCKED network to 127.0.0.1:%d" % other in result.tool_calls[0]["output"]
