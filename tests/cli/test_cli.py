"""The console script, in a real subprocess, against the scripted HTTP server."""

from __future__ import annotations

import os
import re
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


@pytest.mark.process
def test_run_streams_the_answer_and_tool_activity(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("write_file", {"path": "hello.txt", "content": "hi\n"})]),
                       "I wrote hello.txt.")
        out = nbagent(["run", "write a greeting", "--yes"], tmp_path, server)
    assert out.returncode == 0, out.stderr
    assert "I wrote hello.txt." in out.stdout
    assert "write_file" in out.stderr and "done" in out.stderr
    assert (tmp_path / "hello.txt").read_text() == "hi\n"
    # The turn's summary: the second request found the first one's prefix in the (scripted) cache.
    summary = re.search(r"tokens: ([\d,]+) in \(([\d,]+) cached\), ([\d,]+) out", out.stderr)
    assert summary, out.stderr
    total, cached = (int(g.replace(",", "")) for g in summary.groups()[:2])
    assert 1024 <= cached < total


@pytest.mark.process
def test_without_a_terminal_ask_mode_denies_changes(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("write_file", {"path": "x.txt", "content": "x"})]), "Denied, fine.")
        out = nbagent(["run", "write"], tmp_path, server)
    assert out.returncode == 0
    assert "run with --yes" in out.stderr and not (tmp_path / "x.txt").exists()


@pytest.mark.process
def test_a_model_error_exits_non_zero_with_the_message(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Fail(401, "Incorrect API key provided"))
        out = nbagent(["run", "hi"], tmp_path, server)
    assert out.returncode == 1
    assert "Incorrect API key provided" in out.stderr


@pytest.mark.process
def test_continue_resumes_the_newest_session_of_the_directory(tmp_path):
    with ScriptedServer() as server:
        server.enqueue("first", "second")
        assert nbagent(["run", "remember the word kumquat"], tmp_path, server).returncode == 0
        assert nbagent(["run", "--continue", "what was the word?"], tmp_path, server).returncode == 0
        sent = server.model_requests()[-1].body["messages"]
    assert any("kumquat" in (m.get("content") or "") for m in sent)


@pytest.mark.process
def test_piped_answer_keeps_the_paragraphs_of_each_step_apart_as_plain_text(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Reply(text="Let me **look**.", tool_calls=[Call("glob", {"pattern": "*.py"})]),
                       "Done: nothing\x1b[2J here.")
        out = nbagent(["run", "look around"], tmp_path, server)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Let me **look**.\n\nDone: nothing\\x1b[2J here.\n"  # raw Markdown, escapes shown
    assert "→ glob *.py\n  ✓ glob done\n" in out.stderr


@pytest.mark.process
def test_workspace_option_works_before_and_after_the_sessions_command(tmp_path):
    with ScriptedServer() as server:
        server.enqueue("first answer")
        assert nbagent(["run", "a prompt to list"], tmp_path, server).returncode == 0
        after = nbagent(["sessions", "list"], tmp_path, server)  # ... sessions list --workspace X
        env = {**os.environ, "NBAGENT_LOCAL": "off"}
        before = subprocess.run([sys.executable, "-m", "nbagent.cli", "-w", str(tmp_path), "sessions", "list"],
                                capture_output=True, text=True, env=env, timeout=60, cwd="/")
        middle = subprocess.run([sys.executable, "-m", "nbagent.cli", "sessions", "--workspace", str(tmp_path),
                                 "list", "--json"], capture_output=True, text=True, env=env, timeout=60, cwd="/")
    assert after.returncode == 0, after.stderr
    assert "a prompt to list" in after.stdout and "a prompt to list" in before.stdout
    assert '"title": "a prompt to list"' in middle.stdout


def test_on_a_terminal_the_approval_shows_the_whole_command_and_the_answer_is_rendered(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    command = "echo START-" + "z" * 300 + "-END; printf 'a\x1b]0;title\x07'"
    with ScriptedServer() as server:
        server.enqueue(Reply(text="I will **run** it.", tool_calls=[Call("bash", {"command": command})]),
                       "# Result\n\nAll `done`.")
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test",
               "NBAGENT_MODEL": "scripted-model", "NBAGENT_MAX_RETRIES": "0", "TERM": "xterm-256color"}
        child = pexpect.spawn(sys.executable, ["-m", "nbagent.cli", "run", "go", "-w", str(tmp_path)],
                              env=env, encoding="utf-8", timeout=30, dimensions=(40, 120))
        try:
            child.expect_exact("approve bash? [y]es / [n]o / [a]lways: ")
            shown = child.before
            child.sendline("y")
            child.expect(pexpect.EOF)
            rest = child.before
        finally:
            child.close()
        sent = server.model_requests()[-1].body["messages"]
    card = shown.replace("\r\n", "\n")
    assert "? approval needed for bash\n  command: echo START-" + "z" * 300 + "-END; printf 'a\\x1b]0;title\\x07'\n" in card
    assert "\x1b]0;title" not in shown + rest  # the escape sequence itself never reached the terminal
    assert "**run**" not in shown and "\x1b[1m" in shown  # Markdown rendered: bold, not asterisks
    assert "All" in rest and "`done`" not in rest and "# Result" not in rest
    assert child.exitstatus == 0
    assert any(m["role"] == "tool" and "START-" in m["content"] for m in sent)
