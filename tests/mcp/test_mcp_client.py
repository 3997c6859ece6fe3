"""The agent as an MCP client: real servers (the toy server over stdio and HTTP, mcp-server-time) listed,
called, approved, denied, crashed, hung and flooded, driven through a ScriptedModel's tool calls."""

from __future__ import annotations

import json
import shutil
import sys
import threading

import psutil
import pytest

from nbagent import events as ev
from nbagent.errors import ConfigError
from nbagent.testing.replies import Call, Reply

from .conftest import TOY, toy_stdio

pytestmark = pytest.mark.integration

T = "mcp__toy__"


def _servers(**entry):
    return {"mcpServers": {"toy": toy_stdio(**entry)}}


@pytest.mark.process
def test_tools_are_listed_prefixed_with_inlined_schemas_on_the_first_turn(make_agent):
    agent = make_agent("hello", mcp_servers=_servers())
    assert agent.registry.get(f"{T}echo") is None  # nothing starts before a turn
    agent.run("hi")
    names = agent.registry.names()
    assert {f"{T}echo", f"{T}add", f"{T}crash", f"{T}title_arg"} <= set(names)
    echo = agent.registry.get(f"{T}echo")
    assert echo.toolset == "mcp:toy" and "mcp:toy" in agent.registry.enabled
    assert echo.parameters["properties"]["text"] == {"type": "string"}
    # a property named "title" survives the title-stripping of the schema cleaner
    assert "title" in agent.registry.get(f"{T}title_arg").parameters["properties"]
    request = agent.runtime.model.requests[0]
    assert f"{T}echo" in [t["name"] for t in request.tools]
    assert "mcp__<server>__<tool>" in request.system


@pytest.mark.process
def test_reconfigured_tool_sets_switch_a_server_off_and_on_without_restarting_it(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}pid")]), "one", "two", Reply(tool_calls=[Call(f"{T}pid")]),
                       "three", mcp_servers=_servers(trust="read"))
    first = agent.run("go").tool_calls[0]["output"]
    agent.reconfigure(toolsets=["core", "git"])
    agent.run("off")
    assert agent.registry.get(f"{T}pid") is None
    assert f"{T}pid" not in [t["name"] for t in agent.runtime.model.requests[-1].tools]
    agent.reconfigure(toolsets=["core", "mcp"])
    assert agent.run("on").tool_calls[0]["output"] == first  # the same process: kept for the session


@pytest.mark.process
def test_a_call_asks_even_in_auto_mode_and_shows_annotations(make_agent):
    requests = []
    agent = make_agent(Reply(tool_calls=[Call(f"{T}remove_everything", {"where": "/tmp/x"})]), "ok",
                       mcp_servers=_servers(), approval="auto",
                       approver=lambda r: requests.append(r) or "approve")
    result = agent.run("go")
    (call,) = result.tool_calls
    assert call["status"] == "done" and call["output"] == "removed everything under /tmp/x"
    (request,) = requests
    assert request.annotations == {"destructiveHint": True, "readOnlyHint": False}
    assert ev.event_from_dict(request.to_dict()).annotations == request.annotations


@pytest.mark.process
def test_a_readonly_hint_alone_does_not_skip_the_question(make_agent):
    requests = []
    agent = make_agent(Reply(tool_calls=[Call(f"{T}read_thing", {"key": "k"})]), "ok",
                       mcp_servers=_servers(), approver=lambda r: requests.append(r) or "deny")
    result = agent.run("go")
    assert result.tool_calls[0]["status"] == "denied" and len(requests) == 1
    assert requests[0].annotations == {"readOnlyHint": True}


@pytest.mark.process
def test_trust_read_runs_unasked_and_always_runs_in_auto_but_asks_in_ask(make_agent):
    asked = []
    read = make_agent(Reply(tool_calls=[Call(f"{T}add", {"a": 2, "b": 3})]), "ok",
                      mcp_servers=_servers(trust="read"), approver=lambda r: asked.append(r) or "deny")
    assert read.run("go").tool_calls[0]["output"] == "5" and asked == []
    auto = make_agent(Reply(tool_calls=[Call(f"{T}add", {"a": 1, "b": 1})]), "ok",
                      mcp_servers=_servers(trust="always"), approval="auto",
                      approver=lambda r: asked.append(r) or "deny")
    assert auto.run("go").tool_calls[0]["output"] == "2" and asked == []
    ask = make_agent(Reply(tool_calls=[Call(f"{T}add", {"a": 1, "b": 1})]), "ok",
                     mcp_servers=_servers(trust={"add": "always"}),
                     approver=lambda r: asked.append(r) or "deny")
    assert ask.run("go").tool_calls[0]["status"] == "denied" and len(asked) == 1


@pytest.mark.process
def test_read_only_mode_denies_mcp_tools(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}echo", {"text": "x"})]), "ok",
                       mcp_servers=_servers(trust="always"), approval="read-only")
    (call,) = agent.run("go").tool_calls
    assert call["status"] == "denied"


@pytest.mark.process
def test_workspace_servers_need_their_tool_set_named_and_their_trust_is_ignored(make_agent, tmp_path):
    state = tmp_path / ".nbagent"
    state.mkdir()
    (state / "mcp.json").write_text(json.dumps({"mcpServers": {"toy": toy_stdio(trust="read")}}))
    plain = make_agent("hi")
    plain.run("hi")
    assert plain.registry.get(f"{T}echo") is None and "mcp:toy" not in plain.registry.enabled
    asked = []
    named = make_agent(Reply(tool_calls=[Call(f"{T}echo", {"text": "x"})]), "ok",
                       toolsets=["core", "mcp:toy"], approver=lambda r: asked.append(r) or "approve")
    assert named.run("go").tool_calls[0]["output"] == "x"
    # First the server itself (its command, approved for this workspace), then the call (trust "read" ignored).
    assert [r.name for r in asked] == ["mcp_server", f"{T}echo"] and asked[0].arguments["args"] == [str(TOY)]


def test_user_config_file_and_toolset_off(make_agent, tmp_path, monkeypatch):
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    (config_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"toy": toy_stdio()}}))
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(config_dir))
    ws = tmp_path / "ws"
    ws.mkdir()
    on = make_agent("hi", workspace=ws)
    assert "mcp:toy" in on.registry.enabled
    off = make_agent("hi", workspace=ws, toolsets=["core", "git"])
    assert "mcp:toy" not in off.registry.enabled


@pytest.mark.process
def test_bad_settings_raise_a_clear_error_and_a_bad_file_is_reported_not_fatal(make_agent, tmp_path):
    with pytest.raises(ConfigError, match="exactly one of"):
        make_agent("hi", mcp_servers={"x": {"command": "a", "url": "http://b"}})
    with pytest.raises(ConfigError, match="trust"):
        make_agent("hi", mcp_servers={"x": {"command": "a", "trust": "yes"}})
    (tmp_path / ".nbagent").mkdir()
    (tmp_path / ".nbagent" / "mcp.json").write_text("{not json")
    result = make_agent("fine").run("hi")
    assert result.text == "fine"
    assert any("not valid JSON" in m for m in result.errors)


@pytest.mark.process
def test_invalid_arguments_are_checked_against_the_servers_schema(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}add", {"a": "two", "b": 1})]), "ok",
                       mcp_servers=_servers(trust="read"))
    (call,) = agent.run("go").tool_calls
    assert call["status"] == "failed" and "invalid arguments" in call["output"] and "a:" in call["output"]


@pytest.mark.process
def test_huge_output_goes_through_the_output_limit(make_agent, tmp_path):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}huge", {"lines": 5000})]), "ok",
                       mcp_servers=_servers(trust="read"), output_limit=4000)
    (call,) = agent.run("go").tool_calls
    assert len(call["output"]) < 6000 and "line 000000" in call["output"] and "line 004999" in call["output"]
    saved = list((tmp_path / ".nbagent" / "outputs").iterdir())
    assert saved and "line 002500" in saved[0].read_text()


@pytest.mark.process
def test_images_are_summarised(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}picture")]), "ok", mcp_servers=_servers(trust="read"))
    (call,) = agent.run("go").tool_calls
    assert call["output"].startswith("[image image/png, about") and "not shown" in call["output"]


@pytest.mark.process
def test_a_crashed_server_is_named_in_the_error_and_restarts_on_the_next_call(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}pid")]), Reply(tool_calls=[Call(f"{T}crash")]),
                       Reply(tool_calls=[Call(f"{T}pid")]), "ok", mcp_servers=_servers(trust="read"))
    calls = agent.run("go").tool_calls
    first, crashed, again = calls
    assert crashed["status"] == "failed" and "MCP server 'toy' stopped" in crashed["output"]
    assert "restarted on the next call" in crashed["output"] and "crashing on purpose" in crashed["output"]
    assert again["status"] == "done" and again["output"] != first["output"]
    assert not psutil.pid_exists(int(first["output"])) or \
        psutil.Process(int(first["output"])).status() == psutil.STATUS_ZOMBIE


def _stop_when_called(agent, tool_name, action):
    def on_event(event):
        if isinstance(event, ev.ToolCall) and event.name == tool_name:
            threading.Timer(0.3, action).start()

    agent.subscribe(on_event)


@pytest.mark.process
def test_stop_cancels_a_hanging_call_and_the_turn_goes_on(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}hang")]), Reply(tool_calls=[Call(f"{T}echo", {"text": "y"})]),
                       "ok", mcp_servers=_servers(trust="read"))
    _stop_when_called(agent, f"{T}hang", agent.stop_command)
    result = agent.run("go", timeout=60)
    hang, echo = result.tool_calls
    assert hang["status"] == "killed" and "stopped by the user" in hang["output"]
    assert "was killed" not in hang["output"]  # it gave the call up when told: no kill needed
    assert echo["output"] == "y" and result.reason == "done"


@pytest.mark.process
def test_stop_kills_a_server_that_does_not_give_up_and_it_restarts(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}pid")]), Reply(tool_calls=[Call(f"{T}block")]),
                       Reply(tool_calls=[Call(f"{T}pid")]), "ok", mcp_servers=_servers(trust="read"))
    _stop_when_called(agent, f"{T}block", agent.stop_command)
    first, block, again = agent.run("go", timeout=60).tool_calls
    assert block["status"] == "killed" and "was killed" in block["output"]
    old = int(first["output"])
    assert again["status"] == "done" and int(again["output"]) != old
    assert not psutil.pid_exists(old) or psutil.Process(old).status() == psutil.STATUS_ZOMBIE


@pytest.mark.process
def test_abort_cuts_a_hanging_call_and_the_agent_stays_usable(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}hang")]), Reply(tool_calls=[Call(f"{T}echo", {"text": "z"})]),
                       "ok", mcp_servers=_servers(trust="read"))
    _stop_when_called(agent, f"{T}hang", agent.abort)
    assert agent.run("go", timeout=60).reason == "aborted"
    assert agent.run("again", timeout=60).tool_calls[0]["output"] == "z"


@pytest.mark.process
def test_a_server_that_cannot_start_is_reported_and_the_turn_goes_on(make_agent):
    agent = make_agent("still here", mcp_servers={"nope": {"command": "/nonexistent/mcp-server"}})
    result = agent.run("hi")
    assert result.text == "still here"
    assert any("MCP server 'nope' failed to start" in m for m in result.errors)


@pytest.mark.process
def test_streamable_http_server(make_agent, toy_http):
    agent = make_agent(Reply(tool_calls=[Call("mcp__web__add", {"a": 20, "b": 22})]), "ok",
                       mcp_servers={"web": {"url": toy_http, "headers": {"X-Test": "1"}, "trust": "read"}})
    (call,) = agent.run("go").tool_calls
    assert call["output"] == "42"


@pytest.mark.skipif(shutil.which("mcp-server-time") is None and sys.prefix == sys.base_prefix,
                    reason="mcp-server-time is not installed")
@pytest.mark.process
def test_reference_server_mcp_server_time(make_agent):
    command = shutil.which("mcp-server-time") or f"{sys.prefix}/bin/mcp-server-time"
    asked = []
    agent = make_agent(
        Reply(tool_calls=[Call("mcp__time__convert_time", {"source_timezone": "Europe/Paris", "time": "12:00",
                                                            "target_timezone": "Asia/Tokyo"})]),
        Reply(tool_calls=[Call("mcp__time__get_current_time", {"timezone": "UTC"})]), "ok",
        mcp_servers={"time": {"command": command, "args": ["--local-timezone", "UTC"]}},
        approver=lambda r: asked.append(r.name) or ("approve" if len(asked) == 1 else "deny"))
    convert, now = agent.run("go", timeout=60).tool_calls
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(agent.registry.names())
    assert convert["status"] == "done" and "Asia/Tokyo" in convert["output"]
    assert '"datetime": "' in convert["output"].replace("\n", "").replace(" ", "").replace('":"', '": "')
    assert now["status"] == "denied"


@pytest.mark.process
def test_an_http_server_that_went_away_is_named_and_reconnected(make_agent):
    import subprocess

    from .conftest import TOY, free_port, wait_for_port

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"

    def start():
        proc = subprocess.Popen([sys.executable, str(TOY), "http", str(port)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for_port(port, proc)
        return proc

    server = start()
    agent = make_agent(Reply(tool_calls=[Call("mcp__web__add", {"a": 1, "b": 2})]), "ok",
                       Reply(tool_calls=[Call("mcp__web__add", {"a": 2, "b": 2})]), "down",
                       Reply(tool_calls=[Call("mcp__web__add", {"a": 3, "b": 3})]), "back",
                       mcp_servers={"web": {"url": url, "trust": "read"}})
    try:
        assert agent.run("go").tool_calls[0]["output"] == "3"
        server.terminate()
        server.wait(10)
        (down,) = agent.run("again").tool_calls
        assert down["status"] == "failed" and "MCP server 'web'" in down["output"]
        server = start()
        assert agent.run("once more").tool_calls[0]["output"] == "6"
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.process
def test_tools_list_changed_relists_the_server_before_the_next_turn(make_agent):
    agent = make_agent(Reply(tool_calls=[Call(f"{T}grow", {"name": "fresh"})]), "grown",
                       Reply(tool_calls=[Call(f"{T}fresh")]), "used",
                       mcp_servers=_servers(trust="always"), approval="auto")
    seen: list[ev.Event] = []
    agent.subscribe(seen.append)
    assert agent.run("grow a tool").tool_calls[0]["output"] == "added fresh"
    assert agent.registry.get(f"{T}fresh") is None  # the notification is acted on before the next turn
    second = agent.run("use it")
    assert f"{T}fresh" in [t["name"] for t in agent.runtime.model.requests[-1].tools]
    assert second.tool_calls[0]["output"] == "I am fresh"
    (changed,) = [e for e in seen if isinstance(e, ev.SettingsChanged) and "mcp_tools" in e.settings]
    assert "fresh" in changed.settings["mcp_tools"]["toy"] and "echo" in changed.settings["mcp_tools"]["toy"]
    assert "fresh" in agent.snapshot().settings["mcp_tools"]["toy"]
    assert "fresh" in next(row for row in agent.mcp_status() if row["name"] == "toy")["tools"]


@pytest.mark.process
def test_a_workspace_server_not_approved_here_never_starts_in_read_only_mode(make_agent, tmp_path):
    """Issue 26, finding 1: naming the tool set is not enough; read-only mode asks nothing and starts nothing."""
    marker = tmp_path / "started"
    (tmp_path / ".nbagent").mkdir()
    server = {"command": "sh", "args": ["-c", f"touch {marker}; exec {sys.executable} {TOY}"]}
    (tmp_path / ".nbagent" / "mcp.json").write_text(json.dumps({"mcpServers": {"toy": server}}))
    agent = make_agent("ok", "ok", toolsets=["core", "mcp:toy"], approval="read-only")
    first, second = agent.run("go"), agent.run("again")
    (told,) = [e for e in first.events + second.events if isinstance(e, ev.Error) and e.kind == "mcp"]
    assert "not approved for this workspace" in told.message and not marker.exists()
    assert not [e for e in first.events if isinstance(e, ev.ApprovalRequest)]
    assert agent.mcp_status()[0]["status"] == "needs approval"
