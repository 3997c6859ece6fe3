"""The session WebSocket end to end: a scripted model, real tools, real files, several clients."""

from __future__ import annotations

import pytest
import asyncio

from nbagent.render.agent_state import AgentState, reduce
from nbagent.events import event_from_dict
from nbagent.testing.replies import Call, Reply

pytestmark = pytest.mark.process

EDIT = Call("edit_file", {"path": "notes.txt", "old_string": "red", "new_string": "blue"}, id="call_edit")
TODOS = Call("todo_write", {"todos": [{"content": "Change the colour", "status": "in_progress"},
                                      {"content": "Report", "status": "pending"}]}, id="call_todo")


async def new_session(api) -> str:
    return (await api("POST", "sessions"))["id"]


def replay(client) -> dict:
    """The client's AgentState: its (last) snapshot with every later event applied, as JSON."""
    start = max(i for i, e in enumerate(client.seen) if e["type"] == "snapshot")
    state = AgentState.from_dict(client.seen[start]["state"])
    for data in client.seen[start + 1:]:
        state = reduce(state, event_from_dict(data))
    return state.to_dict()


def agent_state(jp_serverapp, session_id: str) -> dict:
    app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    return app.hub.live[session_id].agent.snapshot().to_dict()


async def test_a_scripted_turn_end_to_end(api, connect, model, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(
        Reply(reasoning="Plan the change.", text="I will plan first.", tool_calls=[TODOS]),
        Reply(tool_calls=[EDIT]),
        Reply(text="Done: the colour is blue now."),
    )
    sid = await new_session(api)
    client = await connect(sid)
    snapshot = await client.next()
    assert snapshot["type"] == "snapshot" and snapshot["state"]["session_id"] == sid
    assert snapshot["state"]["transcript"] == [] and snapshot["state"]["turn"] is None

    await client.send(type="prompt", text="Make the colour blue")
    request = await client.until("approval_request")
    assert request["call_id"] == "call_edit" and request["name"] == "edit_file"
    assert "-colour = red" in request["diff"] and "+colour = blue" in request["diff"]
    assert (jp_root_dir / "notes.txt").read_text() == "colour = red\n", "nothing changes before approval"

    await client.send(type="approval", call_id="call_edit", decision="approve")
    end = await client.until("turn_end")
    assert end["reason"] == "done" and end["text"].endswith("Done: the colour is blue now.")
    assert (jp_root_dir / "notes.txt").read_text() == "colour = blue\n"

    kinds = client.types()
    for kind in ("turn_start", "reasoning_delta", "text_delta", "tool_input_start", "tool_call",
                 "todos_changed", "approval_decision", "tool_result", "usage"):
        assert kind in kinds, kind
    # The events arrive as the engine made them: in order, one JSON object each, fields unchanged.
    assert kinds.index("tool_input_start") < kinds.index("approval_request") < kinds.index("approval_decision")
    streamed = "".join(e["text"] for e in client.seen if e["type"] == "text_delta")
    assert streamed == "I will plan first.Done: the colour is blue now."
    todos = next(e for e in client.seen if e["type"] == "todos_changed")["todos"]
    assert [t["content"] for t in todos] == ["Change the colour", "Report"]
    edit_result = next(e for e in client.seen if e["type"] == "tool_result" and e["call_id"] == "call_edit")
    assert edit_result["status"] == "done" and not edit_result["is_error"]
    assert set(edit_result) == {"type", "turn_id", "name", "call_id", "output", "is_error", "status", "duration_ms"}
    model.assert_complete()


async def test_two_clients_see_the_same_events_and_either_may_approve(api, connect, model, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(Reply(text="Editing.", tool_calls=[EDIT]), Reply(text="Both saw it."))
    sid = await new_session(api)
    first, second = await connect(sid), await connect(sid)
    await first.until("snapshot")
    await second.until("snapshot")

    await first.send(type="prompt", text="Edit the notes")
    await first.until("approval_request")
    await second.until("approval_request")
    await second.send(type="approval", call_id="call_edit", decision="approve")
    await first.until("turn_end")
    await second.until("turn_end")
    assert first.seen[1:] == second.seen[1:], "every tab gets every event, in the same order"
    assert (jp_root_dir / "notes.txt").read_text() == "colour = blue\n"
    sessions = (await api("GET", "sessions"))["sessions"]
    assert sessions[0]["open"] is True and sessions[0]["busy"] is False


async def test_a_tab_joining_mid_turn_catches_up_and_can_approve(api, connect, model, jp_root_dir, jp_serverapp):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(Reply(text="First answer."), Reply(text="Now editing.", tool_calls=[EDIT]), Reply(text="ok"))
    sid = await new_session(api)
    first = await connect(sid)
    await first.until("snapshot")
    await first.send(type="prompt", text="one")
    await first.until("turn_end")
    await first.send(type="prompt", text="two")
    await first.until("approval_request")

    late = await connect(sid)
    snapshot = (await late.next())["state"]
    assert [(t["prompt"], t["text"]) for t in snapshot["transcript"]] == [("one", "First answer.")]
    assert snapshot["turn"]["prompt"] == "two" and snapshot["turn"]["items"][0] == {"kind": "text",
                                                                                 "text": "Now editing."}
    assert [a["call_id"] for a in snapshot["approvals"]] == ["call_edit"], "the card shows in the new tab"
    await late.send(type="approval", call_id="call_edit", decision="deny")
    result = await first.until("tool_result", call_id="call_edit")
    assert result["status"] == "denied"
    await first.until("turn_end")
    await late.until("turn_end")
    assert (jp_root_dir / "notes.txt").read_text() == "colour = red\n"
    # Both tabs reach the same state by the same rules: the late one from its snapshot, the first from
    # its own; it is the agent's own state.
    assert replay(late) == replay(first) == agent_state(jp_serverapp, sid)


async def test_prompts_sent_mid_turn_queue_and_abort_clears_them(api, connect, model, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(Reply(tool_calls=[EDIT]), Reply(text="second ran"))
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    await client.send(type="prompt", text="first")
    await client.until("approval_request")
    await client.send(type="prompt", text="second")
    queued = await client.until("prompt_queued")
    assert (queued["prompt"], queued["position"]) == ("second", 1)
    await client.send(type="prompt", text="third")
    await client.until("prompt_queued", prompt="third")

    await client.send(type="abort")
    ends = [await client.until("turn_end") for _ in range(3)]  # the running turn and both queued prompts
    assert {e["reason"] for e in ends} == {"aborted"}
    await client.send(type="prompt", text="after the abort")
    start = await client.until("turn_start")
    assert start["prompt"] == "after the abort", "the queued prompts were dropped by the abort"
    await client.until("turn_end")
    assert (jp_root_dir / "notes.txt").read_text() == "colour = red\n"


async def test_queued_prompts_run_in_order(api, connect, model):
    model.enqueue(Reply(tool_calls=[Call("bash", {"command": "sleep 0.5"}, id="call_sleep")]),
                  Reply(text="one done"), Reply(text="two done"))
    await api("PUT", "settings", body={"approval": "auto"})
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    await client.send(type="prompt", text="one")
    await client.until("tool_call")
    await client.send(type="prompt", text="two")
    await client.until("prompt_queued", prompt="two")
    first_end = await client.until("turn_end")
    second_start = await client.until("turn_start")
    second_end = await client.until("turn_end")
    assert (first_end["text"], second_start["prompt"], second_end["text"]) == ("one done", "two", "two done")


async def test_stop_kills_the_command_and_the_turn_goes_on(api, connect, model):
    model.enqueue(Reply(tool_calls=[Call("bash", {"command": "sleep 30"}, id="call_sleep")]),
                  Reply(text="The command was stopped."))
    await api("PUT", "settings", body={"approval": "auto"})
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    await client.send(type="prompt", text="wait a while")
    await client.until("tool_call", call_id="call_sleep")
    await client.send(type="stop")  # at once: a Stop before the shell has started stops it too
    result = await client.until("tool_result", call_id="call_sleep", timeout=15)
    assert result["status"] == "killed"
    end = await client.until("turn_end")
    assert (end["reason"], end["text"]) == ("done", "The command was stopped.")


async def test_bad_messages_get_an_error_event_and_the_socket_stays_open(api, connect, model):
    model.enqueue(Reply(text="still here"))
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    for bad in ("not json", '{"type": "dance"}', '{"type": "prompt", "text": "  "}',
                '{"type": "approval", "call_id": "x", "decision": "maybe"}', "[1]"):
        await client.ws.write_message(bad)
        error = await client.next()
        assert error["type"] == "error" and error["kind"] == "bad_request" and error["message"], bad
    await client.send(type="prompt", text="hello")
    assert (await client.until("turn_end"))["text"] == "still here"


async def test_an_agent_that_cannot_start_says_why_and_closes(api, connect, jp_serverapp):
    app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    app.model_factory = None
    app.agent_options = {"base_url": "http://127.0.0.1:9/v1"}  # an endpoint without a model name
    sid = await new_session(api)
    client = await connect(sid)
    error = await client.next()
    assert (error["type"], error["kind"]) == ("error", "config")
    assert "NBAGENT_MODEL" in error["message"]
    assert "choose a model in nbagent's settings" in error["message"] and "model=..." not in error["message"]
    assert await client.ws.read_message() is None, "then the socket closes"


async def test_a_fast_stream_arrives_whole_and_in_order_in_few_frames(api, connect, model):
    text = "".join(f"{i:05d}" for i in range(2000))  # 10,000 characters, one per delta
    model.chunk_size = 1
    model.enqueue(Reply(text=text))
    sid = await new_session(api)
    fast, other = await connect(sid), await connect(sid)
    await fast.until("snapshot")
    await other.until("snapshot")
    await fast.send(type="prompt", text="stream")
    await fast.until("turn_end", timeout=60)
    await other.until("turn_end", timeout=60)
    for client in (fast, other):
        assert "".join(e["text"] for e in client.seen if e["type"] == "text_delta") == text
        assert client.frames < len(text) / 10, "events are sent in batches, one frame per slice"


async def test_new_settings_apply_to_an_open_session_before_its_next_prompt(api, connect, model, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(Reply(tool_calls=[EDIT]), Reply(text="edited without asking"))
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    await api("PUT", "settings", body={"approval": "auto"})
    await client.send(type="prompt", text="edit")
    assert (await client.until("turn_end"))["text"] == "edited without asking"
    assert "approval_request" not in client.types()
    assert (jp_root_dir / "notes.txt").read_text() == "colour = blue\n"


async def test_clearing_a_setting_puts_the_open_session_back_to_the_configured_one(api, connect, model,
                                                                                jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(Reply(tool_calls=[EDIT]), Reply(text="asked first"))
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    await api("PUT", "settings", body={"approval": "auto"})
    await client.until("settings_changed")
    await api("PUT", "settings", body={"approval": None})  # the panel cleared it: ask, as configured
    changed = await client.until("settings_changed")
    assert changed["settings"] == {"approval": "ask"}
    await client.send(type="prompt", text="edit")
    request = await client.until("approval_request")
    await client.send(type="approval", call_id=request["call_id"], decision="approve")
    assert (await client.until("turn_end"))["text"] == "asked first"


async def test_the_agent_closes_after_the_last_tab_leaves(api, connect):
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    assert (await api("GET", "sessions", sid))["id"] == sid
    assert [s["open"] for s in (await api("GET", "sessions"))["sessions"]] == [True]
    client.ws.close()
    for _ in range(50):  # idle_close_seconds is 0.2 in these tests
        await asyncio.sleep(0.05)
        if not (await api("GET", "sessions"))["sessions"][0]["open"]:
            break
    assert (await api("GET", "sessions"))["sessions"][0]["open"] is False


async def test_deleting_an_open_session_closes_its_sockets(api, connect):
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    await api("DELETE", "sessions", sid)
    assert await asyncio.wait_for(client.ws.read_message(), 5) is None
    assert (await api("GET", "sessions"))["sessions"] == []


async def test_read_only_set_while_a_turn_runs_applies_to_the_queued_prompt(api, connect, model, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    second = Call("write_file", {"path": "new.txt", "content": "x"}, id="call_write")
    model.enqueue(Reply(tool_calls=[EDIT]), Reply(text="first done"), Reply(tool_calls=[second]),
                  Reply(text="second done"))
    sid = await new_session(api)
    client = await connect(sid)
    await client.until("snapshot")
    await client.send(type="prompt", text="first")
    await client.until("approval_request")
    await client.send(type="prompt", text="second")
    await client.until("prompt_queued")
    await api("PUT", "settings", body={"approval": "read-only"})  # the same agent, reconfigured
    changed = await client.until("settings_changed")
    assert changed["settings"]["approval"] == "read-only"
    await client.send(type="approval", call_id="call_edit", decision="approve")  # asked before: still answered
    await client.until("turn_end")
    decision = await client.until("approval_decision", call_id="call_write")
    assert (decision["decision"], decision["by"]) == ("deny", "read-only mode")
    assert (await client.until("turn_end"))["text"] == "second done"
    assert not (jp_root_dir / "new.txt").exists() and (jp_root_dir / "notes.txt").read_text() == "colour = blue\n"


async def test_a_prompt_carries_what_is_open_in_jupyterlab(api, connect, model):
    model.enqueue(Reply(text="It plots."))
    sid = await new_session(api)
    client = await connect(sid)
    await client.next()
    await client.send(type="prompt", text="explain this cell",
                      context={"notebook": "a.ipynb", "cell_id": "abc", "selection": "df.plot()"})
    await client.until("turn_end")
    sent = model.requests[-1].messages[-1]["content"]
    assert "active notebook: a.ipynb" in sent and "active cell: abc" in sent and "df.plot()" in sent
    assert sent.startswith("explain this cell")
    await client.send(type="prompt", text="x", context={"cell_id": "not an id"})
    error = await client.until("error")
    assert "cell_id" in error["message"]


async def test_a_prompt_attaches_a_cells_output_with_its_image(api, connect, model):
    import base64

    from tests.images.pictures import chart_png

    chart = base64.b64encode(chart_png("rises then falls")).decode()
    output = {"output_type": "display_data", "metadata": {},
              "data": {"image/png": chart, "text/plain": "<Figure size 640x480 with 1 Axes>"}}
    model.enqueue(Reply(text="It rises, then falls."))
    sid = await new_session(api)
    client = await connect(sid)
    await client.next()
    await client.send(type="prompt", text="Explain this output.", attach=[output],
                      context={"notebook": "a.ipynb", "cell_id": "c1", "selection": None, "output": 2})
    await client.until("turn_end")
    sent = model.requests[-1].messages[-1]
    assert sent["content"].startswith("Explain this output.")
    assert "active cell: c1" in sent["content"] and "attached: output 2 of that cell" in sent["content"]
    assert "[attachment 1: an output]" in sent["content"] and "<Figure size 640x480" in sent["content"]
    (image,) = sent["images"]
    assert image["mime"] == "image/png" and (image["width"], image["height"]) == (640, 480)
    turn_start = next(e for e in client.seen if e["type"] == "turn_start")
    assert "[attachment 1" not in turn_start["prompt"]  # the panel's bubble: typed words and the context chip

    for bad, says in (({"attach": [{"output_type": "nope"}]}, "output_type"),
                      ({"attach": [output] * 5}, "at most 4"),
                      ({"context": {"output": 1}}, "cell_id")):
        await client.send(type="prompt", text="x", **bad)
        assert says in (await client.until("error"))["message"]
