"""The console script, in a real subprocess, against the scripted HTTP server."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nbagent.testing.replies import Call, Fail, Reply
from nbagent.testing.server import ScriptedServer

pytestmark = pytest.mark.integration


def nbagent(args, workspace, server, **env):
    environment = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test",
                   "NBAGENT_MODEL": "scripted-model", "NBAGENT_MAX_RETRIES": "0", **env}
    return subprocess.run([sys.executable, "-m", "nbagent.cli", *args, "--workspace", str(workspace)],
                          capture_output=True, text=True, env=environment, timeout=60, stdin=subprocess.DEVNULL)


def test_run_streams_the_answer_and_tool_activity(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("write_file", {"path": "hello.txt", "content": "hi\n"})]),
                       "I wrote hello.txt.")
        out = nbagent(["run", "write a greeting", "--yes"], tmp_path, server)
    assert out.returncode == 0, out.stderr
    assert "I wrote hello.txt." in out.stdout
    assert "write_file" in out.stderr and "done" in out.stderr
    assert (tmp_path / "hello.txt").read_text() == "hi\n"


def test_without_a_terminal_ask_mode_denies_changes(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("write_file", {"path": "x.txt", "content": "x"})]), "Denied, fine.")
        out = nbagent(["run", "write"], tmp_path, server)
    assert out.returncode == 0
    assert "run with --yes" in out.stderr and not (tmp_path / "x.txt").exists()


def test_a_model_error_exits_non_zero_with_the_message(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Fail(401, "Incorrect API key provided"))
        out = nbagent(["run", "hi"], tmp_path, server)
    assert out.returncode == 1
    assert "Incorrect API key provided" in out.stderr


def test_continue_resumes_the_newest_session_of_the_directory(tmp_path):
    with ScriptedServer() as server:
        server.enqueue("first", "second")
        assert nbagent(["run", "remember the word kumquat"], tmp_path, server).returncode == 0
        assert nbagent(["run", "--continue", "what was the word?"], tmp_path, server).returncode == 0
        sent = server.model_requests()[-1].body["messages"]
    assert any("kumquat" in (m.get("content") or "") for m in sent)
