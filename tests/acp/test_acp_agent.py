"""``nbagent acp`` as a subprocess, driven by the SDK's own client: a turn with reasoning, a todo list and two
edits that ask (one allowed, one rejected), cancel mid-stream, a stored session loaded, a client MCP server's
tool, modes and the model option; every message the agent sends is checked against the SDK's models."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import schema as s

from nbagent.testing.replies import Call, Reply, Slow
from nbagent.testing.server import ScriptedServer

from .conftest import RecordingClient, acp_agent, check_against_schema
from tests.paths import TOY_MCP_SERVER

pytestmark = [pytest.mark.integration, pytest.mark.process]

TOY = TOY_MCP_SERVER
TODOS = [{"content": "Bump x in a.py", "status": "in_progress"}, {"content": "Leave b.py alone", "status": "pending"}]


def _prompt(text: str) -> list:
    return [s.TextContentBlock(type="text", text=text)]


async def test_a_turn_streams_reasoning_plan_and_edits_that_ask(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    client = RecordingClient(answers=["approve", "deny"])
    with ScriptedServer() as server:
        server.enqueue(
            Reply(reasoning="First a plan.", tool_calls=[Call("todo_write", {"todos": TODOS}, id="call_plan")]),
            Reply(tool_calls=[Call("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
                                   id="call_edit")]),
            Reply(tool_calls=[Call("write_file", {"path": "b.py", "content": "evil\n"}, id="call_write")]),
            "Edited a.py; b.py was refused.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, check):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            assert session.modes.current_mode_id == "ask"
            assert [m.id for m in session.modes.available_modes] == ["ask", "auto", "read-only"]
            model = session.config_options[0]
            assert model.id == "model" and model.category == "model" and model.current_value == "scripted-model"
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                        prompt=_prompt("bump x, and write b.py")), 60)
        server.assert_complete()
    assert answer.stop_reason == "end_turn"
    assert answer.usage.input_tokens > 0 and answer.usage.output_tokens > 0
    assert client.text(s.AgentThoughtChunk) == "First a plan."
    assert client.text() == "Edited a.py; b.py was refused."
    plans = client.of(s.AgentPlanUpdate)
    assert [(e.content, e.status) for e in plans[-1].entries] == [("Bump x in a.py", "in_progress"),
                                                                   ("Leave b.py alone", "pending")]
    # The allowed edit: asked with the whole file before and after, then run, then shown as done.
    asked_edit, asked_write = client.permissions
    assert [o.kind for o in asked_edit.options] == ["allow_once", "allow_always", "reject_once"]
    diff = asked_edit.tool_call.content[0]
    assert isinstance(diff, s.FileEditToolCallContent)
    assert (diff.path, diff.old_text, diff.new_text) == (str(tmp_path / "a.py"), "x = 1\ny = 2\n", "x = 2\ny = 2\n")
    assert asked_edit.tool_call.locations[0].path == str(tmp_path / "a.py")
    assert asked_edit.tool_call.kind == "edit"
    edit = client.tool_events("call_edit")
    assert isinstance(edit[0], s.ToolCallStart) and edit[0].kind == "edit"
    assert [u.status for u in edit if u.status] == ["pending", "in_progress", "completed"]
    assert edit[-1].content[0].new_text == "x = 2\ny = 2\n"
    assert (tmp_path / "a.py").read_text() == "x = 2\ny = 2\n"
    # The rejected one: a new file (no old text), refused, never written.
    assert asked_write.tool_call.content[0].old_text is None
    assert asked_write.tool_call.content[0].new_text == "evil\n"
    assert client.tool_events("call_write")[-1].status == "failed"
    assert not (tmp_path / "b.py").exists()
    assert check.checked > 10


async def test_cancel_ends_the_turn_mid_stream_and_the_session_goes_on(tmp_path):
    client = RecordingClient()
    long_answer = "word " * 400
    with ScriptedServer() as server:
        server.enqueue(Slow(0.05, Reply(text=long_answer)), "Still here.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=_prompt("talk")))
            await asyncio.wait_for(client.first_chunk.wait(), 60)
            await conn.cancel(session_id=session.session_id)
            answer = await asyncio.wait_for(turn, 30)
            assert answer.stop_reason == "cancelled"
            assert 0 < len(client.text()) < len(long_answer)
            again = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("hi")), 60)
    assert again.stop_reason == "end_turn"
    assert client.text().endswith("Still here.")


async def test_a_stored_session_is_loaded_and_retold(tmp_path):
    (tmp_path / "notes.txt").write_text("kumquat\n")
    with ScriptedServer() as server:
        server.enqueue(Reply(reasoning="Look first.", tool_calls=[Call("read_file", {"path": "notes.txt"},
                                                                       id="call_read")]),
                       "The note says kumquat.", "You asked about the note.")
        first = RecordingClient()
        async with acp_agent(first, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("read the note")), 60)
            listed = await conn.list_sessions(cwd=str(tmp_path))
            assert [x.session_id for x in listed.sessions] == [session.session_id]
        later = RecordingClient()
        async with acp_agent(later, server, tmp_path / "agent.log") as (conn, _):
            loaded = await asyncio.wait_for(conn.load_session(cwd=str(tmp_path), session_id=session.session_id,
                                                              mcp_servers=[]), 60)
            assert loaded.modes.current_mode_id == "ask"
            retold = list(later.updates)
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("and?")), 60)
        server.assert_complete()
    kinds = [type(u).__name__ for u in retold]
    assert kinds[0] == "UserMessageChunk" and retold[0].content.text == "read the note"
    assert "AgentThoughtChunk" in kinds and "AgentMessageChunk" in kinds
    read = next(u for u in retold if isinstance(u, s.ToolCallStart))
    assert (read.tool_call_id, read.kind, read.status) == ("call_read", "read", "completed")
    assert "kumquat" in read.content[0].content.text
    assert read.locations[0].path == str(tmp_path / "notes.txt")
    assert "".join(u.content.text for u in retold if isinstance(u, s.AgentMessageChunk)) == "The note says kumquat."
    assert answer.stop_reason == "end_turn"
    # The loaded session went on with its history: the model saw the first turn.
    assert "kumquat" in str(server.last.body["messages"])


async def test_a_client_mcp_server_is_a_tool_set_that_asks(tmp_path):
    client = RecordingClient(answers=["approve"])
    toy = s.McpServerStdio(name="toy", command=sys.executable, args=[str(TOY)], env=[])
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("mcp__toy__echo", {"text": "ping from the client"}, id="call_echo")]),
                       "The toy server answered.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[toy])
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("echo")), 90)
        server.assert_complete()
    assert answer.stop_reason == "end_turn"
    assert "mcp__toy__echo" in [t["function"]["name"] for t in server.model_requests()[0].body["tools"]]
    (asked,) = client.permissions  # a server's tools ask before every call
    assert asked.tool_call.tool_call_id == "call_echo"
    done = client.tool_events("call_echo")[-1]
    assert done.status == "completed" and "ping from the client" in done.content[0].content.text


async def test_modes_and_the_model_are_session_settings(tmp_path):
    client = RecordingClient()
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("write_file", {"path": "c.txt", "content": "c\n"}, id="call_c")]),
                       "Written without asking.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await conn.set_session_mode(mode_id="auto", session_id=session.session_id)
            changed = await conn.set_config_option(config_id="model", session_id=session.session_id,
                                                   value="scripted-model-2")
            assert changed.config_options[0].current_value == "scripted-model-2"
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("write c")), 60)
    assert client.permissions == []
    assert (tmp_path / "c.txt").read_text() == "c\n"
    assert server.model_requests()[0].body["model"] == "scripted-model-2"


async def test_read_file_sees_the_editors_unsaved_text_where_the_client_offers_it(tmp_path):
    (tmp_path / "open.py").write_text("saved = 1\n")
    (tmp_path / "closed.py").write_text("on disk = 2\n")
    client = RecordingClient(buffers={str(tmp_path / "open.py"): "saved = 1\nunsaved = 3\n"})
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("read_file", {"path": "open.py"}, id="call_open"),
                                         Call("read_file", {"path": "closed.py"}, id="call_closed")]), "Read.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("read both")), 60)
    assert sorted(client.reads) == [str(tmp_path / "closed.py"), str(tmp_path / "open.py")]
    results = {m["tool_call_id"]: m["content"] for m in server.last.body["messages"] if m["role"] == "tool"}
    assert "unsaved = 3" in results["call_open"]  # the editor's buffer, not the file
    assert "on disk = 2" in results["call_closed"]  # a file the editor does not hold: read from disk


def test_the_handshake_answer_is_the_sdks_initialize_response():
    import acp

    from nbagent.acp.handshake import PROTOCOL_VERSION, capabilities

    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION
    check_against_schema(s.InitializeResponse, capabilities(1))
