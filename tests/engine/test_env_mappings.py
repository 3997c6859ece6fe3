"""NBAGENT_TOOL_APPROVALS (a mapping in an environment variable) as JSON or as name=policy pairs; anything
else is an error that shows both forms, never a setting silently dropped (issue 40, item 11)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nbagent.config import AgentConfig
from nbagent.errors import ConfigError
from nbagent.testing.replies import Call, Reply
from nbagent.testing.server import ScriptedServer


@pytest.mark.parametrize("text", ['{"notebook_run": "never", "bash": "always_ask"}',
                                  " notebook_run = never , bash=always_ask ",
                                  '{"notebook_run":"never","bash":"always_ask"}'])
def test_both_forms_give_the_same_policies(text, tmp_path, monkeypatch):
    monkeypatch.setenv("NBAGENT_TOOL_APPROVALS", text)
    config = AgentConfig.load(workspace=tmp_path)
    assert config.tool_approvals == {"notebook_run": "never", "bash": "always_ask"}


@pytest.mark.parametrize("text, why", [('["bash"]', "is neither"), ('{"bash": ', "not valid JSON"),
                                       ("bash", "'bash' is neither"), ("bash=ask,kernel_run", "'kernel_run'"),
                                       ('{"bash": 1}', "must be a string"), ("=ask", "'=ask' is neither")])
def test_anything_else_is_an_error_naming_both_forms(text, why, tmp_path, monkeypatch):
    monkeypatch.setenv("NBAGENT_TOOL_APPROVALS", text)
    with pytest.raises(ConfigError) as err:
        AgentConfig.load(workspace=tmp_path)
    message = str(err.value)
    assert "NBAGENT_TOOL_APPROVALS takes a JSON object" in message and "name=value pairs" in message
    assert why in message


@pytest.mark.integration
def test_the_json_form_reaches_a_turn_of_the_cli(tmp_path):
    """bash asks by default, and without a terminal nobody can answer: with {"bash": "never"} it runs."""
    env = {**os.environ, "NBAGENT_LOCAL": "off", "OPENAI_API_KEY": "sk-test", "NBAGENT_MODEL": "scripted-model",
           "NBAGENT_MAX_RETRIES": "0", "NBAGENT_TOOL_APPROVALS": '{"bash": "never"}'}
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("bash", {"command": "echo ran > out.txt"})]), "Done.")
        out = subprocess.run([sys.executable, "-m", "nbagent.cli", "run", "go", "-w", str(tmp_path)],
                             capture_output=True, text=True, env={**env, "OPENAI_BASE_URL": server.url},
                             timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "out.txt").read_text() == "ran\n"
    bad = subprocess.run([sys.executable, "-m", "nbagent.cli", "run", "go", "-w", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                         env={**env, "NBAGENT_TOOL_APPROVALS": "bash:never"})
    assert bad.returncode == 2 and "NBAGENT_TOOL_APPROVALS takes a JSON object" in bad.stderr, bad.stderr
