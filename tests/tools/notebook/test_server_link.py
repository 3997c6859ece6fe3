"""The kernel side of the server link: the runtime file, the secret kept out of tool results, the fallback."""

from __future__ import annotations

import json
import os
import secrets
import subprocess

import pytest

from nbagent import Agent
from nbagent.jupyter.kernel import server_client as server_link
from nbagent.render.redaction import PLACEHOLDER, forget_secret
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel
from nbagent.tools import nbdoc, nbstores
from nbagent.tools import notebook as nbt

from .conftest import cell_ids


@pytest.fixture
def link_file(tmp_path):
    secret = secrets.token_urlsafe(32)
    path = tmp_path / "runtime" / "nbagent-server-1.json"
    path.parent.mkdir()
    # A server that is gone: nothing listens on port 9 (discard), so requests fail to connect.
    path.write_text(json.dumps({"url": "http://127.0.0.1:9/", "secret": secret}), encoding="utf-8")
    path.chmod(0o600)
    yield path, secret
    server_link.disconnect()
    forget_secret(secret)


@pytest.mark.process
def test_the_shell_tool_cannot_show_the_secret(tmp_path, link_file):
    path, secret = link_file
    store = server_link.connect({server_link.ENV_VAR: str(path)})
    assert store is not None and store in nbstores.stores()
    model = ScriptedModel([Reply(tool_calls=[Call("bash", {"command": f"cat {path}; echo; env"})]), "done"])
    agent = Agent(model=model, workspace=tmp_path, approval="auto")
    try:
        result = agent.run("show it")
    finally:
        agent.close()
    (call,) = result.tool_calls
    assert '"secret": "' + PLACEHOLDER in call["output"] and secret not in call["output"]
    assert all(secret not in json.dumps(m) for m in agent.session.messages)
    assert secret not in os.environ.get(server_link.ENV_VAR, "")


def test_without_a_reachable_server_the_file_is_edited(ctx, sample, link_file):
    path, _ = link_file
    server_link.connect({server_link.ENV_VAR: str(path)})
    text = nbt.notebook_read(ctx, "analysis.ipynb")
    assert "read from the file" in text
    nbt.notebook_edit(ctx, "analysis.ipynb", cell_ids(sample)[0], "# Edited")
    assert "# Edited" in sample.read_text(encoding="utf-8")


def test_no_link_without_the_variable_or_with_a_bad_file(tmp_path):
    assert server_link.connect({}) is None
    bad = tmp_path / "x.json"
    bad.write_text('{"url": "http://x/", "secret": "short"}', encoding="utf-8")
    assert server_link.connect({server_link.ENV_VAR: str(bad)}) is None


@pytest.mark.process
def test_a_terminal_finds_the_server_that_serves_its_workspace(tmp_path, monkeypatch):
    """``nbagent undo`` outside a kernel: the runtime file of a live server whose root holds the workspace."""
    runtime, root = tmp_path / "runtime", tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv(server_link.ENV_VAR, raising=False)
    secrets_made = []

    def info(name: str, *, pid: int, root_dir, mode: int = 0o600) -> None:
        secret = secrets.token_urlsafe(32)
        secrets_made.append(secret)
        path = runtime / name
        path.write_text(json.dumps({"url": f"http://127.0.0.1:9/{name}/", "secret": secret, "root": str(root_dir),
                                    "pid": pid}), encoding="utf-8")
        path.chmod(mode)

    try:
        assert server_link.find_server(root / "sub") is None  # no server: the CLI writes files
        ended = subprocess.Popen(["true"])
        ended.wait()
        info("nbagent-server-1.json", pid=ended.pid, root_dir=root)  # its server was killed
        info("nbagent-server-2.json", pid=os.getpid(), root_dir=tmp_path / "other")  # another project
        info("nbagent-server-3.json", pid=os.getpid(), root_dir=root, mode=0o644)  # not written by us
        assert server_link.find_server(root / "sub") is None
        info("nbagent-server-4.json", pid=os.getpid(), root_dir=root)
        found = server_link.find_server(root / "sub")
        assert found is not None and "/nbagent-server-4.json/" in found.url
        assert found not in nbstores.stores()  # nothing registered for the process
        # A terminal JupyterLab opened inherits the file's path.
        inherited = server_link.find_server(root, {server_link.ENV_VAR: str(runtime / "nbagent-server-4.json")})
        assert inherited is not None and inherited.secret == found.secret
    finally:
        for secret in secrets_made:
            forget_secret(secret)
