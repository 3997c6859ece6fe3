"""Model profiles: the offline model's first request carries the short prompt and the read tool set only.

Over the wire, against nbagent.testing's scripted server, with the Chat adapter as the offline model
gets it (nbagent.model.factory.offline_chat_model); the real llama.cpp server is in
tests/model/test_llama_server.py.
"""

from __future__ import annotations

import json

import pytest

from nbagent import Agent
from nbagent.config import AgentConfig
from nbagent.errors import ConfigError
from nbagent.model.chat import ChatModel
from nbagent.model.factory import offline_chat_model
from nbagent.engine.profiles import SMALL
from nbagent.testing import ScriptedServer, call, calls

README_PROMPT = "List the files in this workspace and say what they are for"
READ_TOOLS = ["list_dir", "read_file", "grep"]


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "analysis.py").write_text('print("<b>&</b>")\n')
    (tmp_path / "notes.md").write_text("# Notes\n")
    return tmp_path


def agent_on(server, workspace, *, offline: bool, **options) -> Agent:
    config = AgentConfig.load(workspace=workspace, base_url=server.url, api_key="k", model="m", local="off",
                              persist=False, approval="read-only", **options)
    model = offline_chat_model(config) if offline else ChatModel(config)
    return Agent(config=config, model=model)


def tool_names(body) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


@pytest.mark.process
def test_the_offline_model_gets_the_short_prompt_the_read_tools_and_a_cap(workspace):
    with ScriptedServer(calls(call("list_dir", path=".")), "analysis.py prints; notes.md notes.") as server:
        agent = agent_on(server, workspace, offline=True)
        try:
            result = agent.run(README_PROMPT, timeout=60)
            settings = agent.snapshot().settings
        finally:
            agent.close()
    first, second = (r.body for r in server.model_requests("chat"))
    assert tool_names(first) == READ_TOOLS
    system = first["messages"][0]
    assert system["role"] == "system" and len(system["content"]) < 400
    assert "list_dir, read_file, grep" in system["content"] and "bash" not in system["content"]
    assert first["stream"] is True and first["max_tokens"] == SMALL.max_tokens
    assert agent.runtime.config.output_limit == SMALL.output_limit and agent.runtime.config.max_steps == SMALL.max_steps
    # After one round of tool results it must answer in text: no tools offered, still streamed and capped.
    assert "tools" not in second and second["stream"] is True and second["max_tokens"] == SMALL.max_tokens
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and "analysis.py" in tool_message["content"]
    assert second["messages"][-2]["content"] == ""  # llama-cpp-python's schema refuses null beside tool_calls
    assert result.text == "analysis.py prints; notes.md notes."
    # Front ends see the tool set that is really on.
    assert settings["profile"] == "small" and settings["toolsets"] == ["read"]
    assert settings["enabled_toolsets"] == ["read"] and settings["tools"] == READ_TOOLS


@pytest.mark.process
def test_a_configured_endpoint_keeps_the_full_profile(workspace):
    with ScriptedServer("ok") as server:
        agent = agent_on(server, workspace, offline=False)
        try:
            agent.run("hi", timeout=60)
            settings = agent.snapshot().settings
        finally:
            agent.close()
    body = server.model_requests("chat")[0].body
    assert {"bash", "edit_file", "git_status", "list_dir"} <= set(tool_names(body))
    assert "max_tokens" not in body and settings["profile"] == "full" and "core" in settings["toolsets"]


@pytest.mark.parametrize("options,expected", [
    ({"profile": "full"}, {"bash", "write_file", "git_diff"}),
    ({"toolsets": ["read", "git"]}, {"git_status", *READ_TOOLS}),
])
@pytest.mark.process
def test_the_small_profile_is_overridable_in_config(workspace, options, expected):
    with ScriptedServer("ok") as server:
        agent = agent_on(server, workspace, offline=True, **options)
        try:
            agent.run("hi", timeout=60)
        finally:
            agent.close()
    assert expected <= set(tool_names(server.model_requests("chat")[0].body))


def test_an_explicit_small_profile_applies_to_any_model(make_agent):
    agent = make_agent("ok", profile="small")
    agent.run("hi")
    request = agent.runtime.model.requests[0]
    assert [t["name"] for t in request.tools] == READ_TOOLS and request.max_tokens == SMALL.max_tokens


def test_the_profile_cannot_change_on_a_live_agent(make_agent):
    agent = make_agent("ok")
    with pytest.raises(ConfigError, match="profile cannot change"):
        agent.reconfigure(profile="small")


def test_a_bad_profile_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="profile must be one of"):
        AgentConfig.load(workspace=tmp_path, profile="tiny")


def test_tool_results_go_out_as_written(workspace):
    """What the model reads is the file's text: nbagent escapes nothing on the wire."""
    with ScriptedServer(calls(call("read_file", path="analysis.py")), "done") as server:
        agent = agent_on(server, workspace, offline=True)
        try:
            agent.run("show analysis.py", timeout=60)
        finally:
            agent.close()
    tool_message = server.model_requests("chat")[1].body["messages"][-1]
    assert 'print("<b>&</b>")' in tool_message["content"]
    assert "&#34;" not in tool_message["content"] and "&lt;" not in tool_message["content"]


def test_switching_tool_sets_on_shows_the_tools_now_offered(make_agent):
    agent = make_agent("ok", profile="small")
    seen = []
    agent.subscribe(seen.append)
    agent.reconfigure(toolsets=["read", "git"])
    (event,) = [e for e in seen if e.type == "settings_changed"]
    assert event.settings["toolsets"] == ["read", "git"] and event.settings["enabled_toolsets"] == ["read", "git"]
    assert {"git_status", "list_dir"} <= set(event.settings["tools"])
    assert agent.snapshot().settings["tools"] == event.settings["tools"]
