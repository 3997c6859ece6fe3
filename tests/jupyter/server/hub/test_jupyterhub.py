"""nbagent in a real JupyterHub: the panel's REST and WebSocket through the proxy under /user/<name>/,
and two users who cannot reach each other's nbagent API.

The hub (jupyterhub from PyPI) runs configurable-http-proxy (npm, installed by scripts/setup.sh), the
dummy authenticator and the simple local-process spawner, all on 127.0.0.1 under one scratch folder;
the single-user servers talk to the scripted model server. See docs/install.md (JupyterHub).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
import requests

from nbagent.testing import Reply, ScriptedServer
from tests.paths import CHECKOUT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]
ROOT = CHECKOUT
CHP = ROOT / ".cache/chp/node_modules/.bin/configurable-http-proxy"
USERS = ("alice", "bob")
ADMIN_TOKEN = "hubtest-admin-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


CONFIG = """
import os
from pathlib import Path
scratch = Path(os.environ["HUBTEST_SCRATCH"])
c.JupyterHub.bind_url = f"http://127.0.0.1:{os.environ['HUBTEST_PORT']}/"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ["HUBTEST_HUB_PORT"])
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ['HUBTEST_PROXY_API_PORT']}"
c.ConfigurableHTTPProxy.command = [os.environ["HUBTEST_CHP"]]
c.ConfigurableHTTPProxy.pid_file = str(scratch / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{scratch}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = str(scratch / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(scratch / "jupyterhub.pid")
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = {"alice", "bob"}
c.JupyterHub.services = [{"name": "hubtest", "api_token": os.environ["HUBTEST_ADMIN_TOKEN"]}]
c.JupyterHub.load_roles = [{"name": "hubtest-admin", "services": ["hubtest"],
                            "scopes": ["admin:users", "admin:servers", "tokens"]}]
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(scratch / "homes/{username}")
c.Spawner.cmd = [os.environ["HUBTEST_SINGLEUSER"]]
c.Spawner.args = ["--allow-root"]
c.Spawner.default_url = "/lab"
c.Spawner.http_timeout = 90
c.JupyterHub.tornado_settings = {"slow_spawn_timeout": 0}
c.Spawner.environment = {"OPENAI_BASE_URL": os.environ["HUBTEST_MODEL_URL"], "OPENAI_API_KEY": "sk-test",
                         "NBAGENT_MODEL": "scripted-model", "NBAGENT_LOCAL": "off", "NBAGENT_MAX_RETRIES": "0",
                         "NBAGENT_MEMORY": "0"}
"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    if not CHP.exists():
        pytest.fail(f"configurable-http-proxy is not installed at {CHP}: run scripts/setup.sh")
    scratch = tmp_path_factory.mktemp("hub")
    for user in USERS:  # no "Jupyter news?" toast over the panel
        settings = scratch / f"homes/{user}/.jupyter/lab/user-settings/@jupyterlab/apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    (scratch / "jupyterhub_config.py").write_text(textwrap.dedent(CONFIG))
    model = ScriptedServer(responder=lambda body: Reply(text="hello from the hub")).start()
    port = free_port()
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "HUBTEST_SCRATCH": str(scratch), "HUBTEST_PORT": str(port),
           "HUBTEST_HUB_PORT": str(free_port()), "HUBTEST_PROXY_API_PORT": str(free_port()),
           "HUBTEST_CHP": str(CHP), "HUBTEST_ADMIN_TOKEN": ADMIN_TOKEN, "HUBTEST_MODEL_URL": model.url,
           "HUBTEST_SINGLEUSER": str(bin_dir / "jupyterhub-singleuser"),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    log = open(scratch / "hub.log", "w")
    proc = subprocess.Popen([str(bin_dir / "jupyterhub"), "-f", "jupyterhub_config.py"], cwd=scratch, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    admin = {"Authorization": f"token {ADMIN_TOKEN}"}
    try:
        wait_for(lambda: _ok(f"{base}/hub/api/"), 60, "the hub behind its proxy")
        for user in USERS:
            r = requests.post(f"{base}/hub/api/users/{user}/server", headers=admin, timeout=30)
            assert r.status_code in (201, 202), r.text
        for user in USERS:
            wait_for(lambda: (requests.get(f"{base}/hub/api/users/{user}", headers=admin, timeout=10).json()
                              .get("servers", {}).get("", {}).get("ready")), 120, f"{user}'s server")
        tokens = {}
        for user in USERS:
            r = requests.post(f"{base}/hub/api/users/{user}/tokens", headers=admin, timeout=10,
                              json={"note": "hubtest", "expires_in": 3600})
            assert r.status_code == 201, r.text
            tokens[user] = r.json()["token"]
        yield {"base": base, "port": port, "tokens": tokens, "scratch": scratch}
    finally:
        children = psutil.Process(proc.pid).children(recursive=True) if proc.poll() is None else []
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        gone, alive = psutil.wait_procs(children, timeout=10)
        for p in alive:
            p.kill()
        log.close()
        model.close()


def _ok(url: str) -> bool:
    try:
        return requests.get(url, timeout=5).status_code == 200
    except requests.RequestException:
        return False


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}"}


def test_rest_through_the_proxy_and_users_kept_apart(hub):
    base, tokens = hub["base"], hub["tokens"]
    api = f"{base}/user/alice/nbagent/api/sessions"
    assert requests.get(api, headers=_auth(tokens["alice"]), timeout=20).status_code == 200
    created = requests.post(api, headers=_auth(tokens["alice"]), timeout=20)
    assert created.status_code == 201, created.text
    listed = requests.get(api, headers=_auth(tokens["alice"]), timeout=20).json()["sessions"]
    assert created.json()["id"] in [s["id"] for s in listed]
    assert requests.get(api, headers=_auth(tokens["bob"]), timeout=20).status_code == 403
    assert requests.post(api, headers=_auth(tokens["bob"]), timeout=20).status_code == 403
    assert requests.get(api, timeout=20).status_code == 403
    bobs = requests.get(f"{base}/user/bob/nbagent/api/sessions", headers=_auth(tokens["bob"]), timeout=20)
    assert bobs.status_code == 200 and created.json()["id"] not in [s["id"] for s in bobs.json()["sessions"]]
    # each user's agent works in that user's own home
    assert (hub["scratch"] / "homes/alice/.nbagent").is_dir()


def test_a_turn_over_the_websocket_through_the_proxy(hub):
    import websocket

    base, tokens, port = hub["base"], hub["tokens"], hub["port"]
    sid = requests.post(f"{base}/user/alice/nbagent/api/sessions", headers=_auth(tokens["alice"]),
                        timeout=20).json()["id"]
    url = f"ws://127.0.0.1:{port}/user/alice/nbagent/api/sessions/{sid}/ws"
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(url, header=[f"Authorization: token {tokens['bob']}"], timeout=20)
    assert refused.value.status_code == 403
    ws = websocket.create_connection(url, header=[f"Authorization: token {tokens['alice']}"], timeout=30)
    try:
        assert json.loads(ws.recv())["type"] == "snapshot"
        ws.send(json.dumps({"type": "prompt", "text": "say hello"}))
        seen = []
        while not seen or seen[-1]["type"] != "turn_end":
            seen += [json.loads(line) for line in ws.recv().splitlines()]  # a frame holds one event per line
    finally:
        ws.close()
    assert seen[-1]["reason"] == "done" and seen[-1]["text"] == "hello from the hub"
    assert "text_delta" in [e["type"] for e in seen]
