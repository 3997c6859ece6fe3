"""Undo and redo from a panel over the session socket: every client sees the checkpoint event."""

from __future__ import annotations

import pytest
from nbagent.testing.replies import Call, Reply

pytestmark = pytest.mark.process

EDIT = Call("edit_file", {"path": "notes.txt", "old_string": "red", "new_string": "blue"}, id="call_edit")


async def test_undo_and_redo_over_the_socket(api, connect, model, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(Reply(tool_calls=[EDIT]), Reply(text="Blue now."))
    sid = (await api("POST", "sessions"))["id"]
    client = await connect(sid)
    await client.next()
    await client.send(type="prompt", text="Make it blue")
    await client.until("approval_request")
    await client.send(type="approval", call_id="call_edit", decision="approve")
    taken = await client.until("checkpoint")
    assert taken["action"] == "taken" and taken["files"] == ["notes.txt"] and taken["undo_turn"] == 1
    await client.until("turn_end")

    await client.send(type="redo")
    refused = await client.until("error")
    assert refused["kind"] == "checkpoint" and "nothing to redo" in refused["message"]
    await client.send(type="undo", turn=1)
    undone = await client.until("checkpoint")
    assert (undone["action"], undone["turn"], undone["redo_turn"]) == ("undone", 1, 1)
    assert (jp_root_dir / "notes.txt").read_text() == "colour = red\n"
    await client.send(type="redo", turn=1)
    assert (await client.until("checkpoint"))["action"] == "redone"
    assert (jp_root_dir / "notes.txt").read_text() == "colour = blue\n"
    await client.send(type="undo", turn="one")
    assert (await client.until("error"))["kind"] == "bad_request"
