"""What a client offers, used by ``nbagent acp`` (driven as a subprocess by the SDK's client): edits written
through ``fs/write_text_file`` (the editor's buffer gets them; checkpoints still record them), ``bash`` in the
client's terminal only for a command the user approved to leave the sandbox (and killed on Stop), and a
``usage_update`` after each model call."""

from __future__ import annotations

import asyncio

import pytest
from acp import schema as s

from nbagent.testing.replies import Call, Reply, Slow
from nbagent.testing.server import ScriptedServer
from nbagent.workspace import sandbox

from .conftest import RecordingClient, acp_agent

pytestmark = [pytest.mark.integration, pytest.mark.process]


def _prompt(text: str) -> list:
    return [s.TextContentBlock(type="text", text=text)]


async def test_edits_go_through_the_editor_and_checkpoints_still_record_them(tmp_path):
    (tmp_path / "saved.py").write_text("a = 1\n")
    (tmp_path / "held.py").write_text("b = 1\n")
    saved, held = str(tmp_path / "saved.py"), str(tmp_path / "held.py")
    client = RecordingClient(answers=["approve", "approve"], writes=True, saves=(saved,))
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("edit_file", {"path": "saved.py", "old_string": "a = 1",
                                                           "new_string": "a = 2"}, id="call_saved")]),
                       Reply(tool_calls=[Call("edit_file", {"path": "held.py", "old_string": "b = 1",
                                                           "new_string": "b = 2"}, id="call_held")]),
                       "Both edited.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("edit")), 60)
        assert answer.stop_reason == "end_turn"
        # The editor got both edits; the one it kept unsaved in its buffer was written to disk by nbagent.
        assert client.writes == [(saved, "a = 2\n"), (held, "b = 2\n")]
        assert (tmp_path / "saved.py").read_text() == "a = 2\n"
        assert (tmp_path / "held.py").read_text() == "b = 2\n"
        assert [client.tool_events(c)[-1].status for c in ("call_saved", "call_held")] == ["completed"] * 2
        from nbagent import Agent

        stored = Agent(workspace=str(tmp_path), session=session.session_id, model="scripted-model",
                       base_url=server.url, api_key="sk-test", memory=False)
        try:
            diff = stored.diff(1)
            assert "+a = 2" in diff and "+b = 2" in diff  # the turn's checkpoint holds both edits
            stored.undo()
        finally:
            stored.close()
    assert (tmp_path / "saved.py").read_text() == "a = 1\n" and (tmp_path / "held.py").read_text() == "b = 1\n"


async def test_bash_uses_the_clients_terminal_only_for_approved_commands_outside_the_sandbox(tmp_path):
    confined = sandbox.current().active
    client = RecordingClient(answers=["approve", "approve"], terminals=True)
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("bash", {"command": "echo inside"}, id="call_inside")]),
                       Reply(tool_calls=[Call("bash", {"command": "echo outside; exit 3",
                                                       "outside_sandbox": "the test needs it"},
                                              id="call_outside")]),
                       "Ran both.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("run")), 60)
        server.assert_complete()
    assert answer.stop_reason == "end_turn"
    results = {m["tool_call_id"]: m["content"] for m in server.last.body["messages"] if m["role"] == "tool"}
    # Approved, and it leaves the sandbox: the editor's terminal, with its output and exit code.
    outside = [t for t in client.terminals.values() if t.args == ["-c", "echo outside; exit 3"]]
    assert len(outside) == 1 and outside[0].command == "bash" and outside[0].cwd == str(tmp_path)
    assert "exit code: 3" in results["call_outside"] and "outside" in results["call_outside"]
    assert "editor's terminal" in results["call_outside"]
    shown = client.tool_events("call_outside")[-1].content
    assert any(isinstance(c, s.TerminalToolCallContent) for c in shown)
    # Approved too, but where the sandbox holds it, it runs in nbagent's own (confined) process.
    assert "exit code: 0" in results["call_inside"] and "inside" in results["call_inside"]
    used = [t.args[1] for t in client.terminals.values()]
    assert ("echo inside" in used) is not confined
    assert client.terminal_calls[-1].startswith("release")


async def test_a_command_in_the_clients_terminal_is_killed_on_stop(tmp_path):
    client = RecordingClient(answers=["approve"], terminals=True)
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("bash", {"command": "echo started; sleep 60",
                                                       "outside_sandbox": "the test needs it"}, id="call_sleep")]),
                       "After the stop.")
        async with acp_agent(client, server, tmp_path / "agent.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=_prompt("sleep")))
            for _ in range(600):
                if client.terminals:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            await conn.cancel(session_id=session.session_id)
            answer = await asyncio.wait_for(turn, 30)
    assert answer.stop_reason == "cancelled"
    (terminal,) = client.terminals.values()
    assert terminal.process.returncode is not None  # killed, not left sleeping
    assert [c.split()[0] for c in client.terminal_calls] == ["create", "kill", "release"]


async def test_a_usage_update_follows_each_model_call(tmp_path):
    client = RecordingClient(answers=["approve"])
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("write_file", {"path": "u.txt", "content": "u\n"}, id="call_u")]),
                       "Done.")
        async with acp_agent(client, server, tmp_path / "agent.log", NBAGENT_COMPACT_THRESHOLD="50000") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=_prompt("u")), 60)
    usage = client.of(s.UsageUpdate)
    assert len(usage) == 2  # one per model call of the turn
    assert all(0 < u.used <= u.size == 50_000 for u in usage)
    assert usage[1].used > usage[0].used  # the second call's context holds the first's tool call and result
    assert answer.usage.input_tokens + answer.usage.output_tokens >= usage[1].used
    # Sent after each step, not at the turn's end: the first comes before the second step's text.
    kinds = [type(u).__name__ for u in client.updates]
    assert kinds.index("UsageUpdate") < kinds.index("AgentMessageChunk")
