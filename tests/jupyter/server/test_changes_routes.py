"""The review routes (/nbagent/api/changes) on a real Jupyter server with a collaborating client.

The agent here runs beside the server, not in its hub, the way a kernel's ``%agent`` does: its turn is
found through the shared checkpoints and database, and the server writes the picked rows into the open
notebook's live document (which the room then saves).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from tornado.httpclient import HTTPClientError

from nbagent import Agent
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

from .live_helpers import disk_sources, sources, until, write_notebook
from .test_live_notebooks import jp_server_config, open_view  # noqa: F401  (the RTC server and its client)

pytestmark = [pytest.mark.process, pytest.mark.integration]


@pytest.fixture
def api(jp_fetch):
    async def call(method: str, *path: str, body=None, **kwargs):
        if body is not None:
            kwargs["body"] = json.dumps(body)
        response = await jp_fetch("nbagent", "api", *path, method=method, **kwargs)
        return json.loads(response.body)

    return call


@pytest.fixture
def edited(jp_root_dir):
    """A notebook of three code cells and an agent whose turn edited all three (cell c in two places)."""
    ids = write_notebook(jp_root_dir, "a.ipynb", [("code", "x = 1"), ("code", "def f(y):\n    return y"),
                                                  ("code", "one\ntwo\nthree\nfour\nfive")])
    agent = Agent(model=ScriptedModel([Reply(tool_calls=[Call("notebook_read", {"path": "a.ipynb"})]), Reply(tool_calls=[
        Call("notebook_edit", {"path": "a.ipynb", "cell_id": ids[0], "source": "x = 2"}),
        Call("notebook_edit", {"path": "a.ipynb", "cell_id": ids[1], "source": "def f(y):\n    return y * 2"}),
        Call("notebook_edit", {"path": "a.ipynb", "cell_id": ids[2], "source": "ONE\ntwo\nthree\nfour\nFIVE"}),
    ]), "Done."]), workspace=jp_root_dir, approval="auto")
    yield agent, ids
    agent.close()


async def test_keep_undo_a_cell_and_a_hunk_then_redo_in_the_open_notebook(jp_serverapp, jp_root_dir, open_view,
                                                                       api, jp_ws_fetch, edited):
    agent, ids = edited
    path = jp_root_dir / "a.ipynb"
    views = await jp_ws_fetch("nbagent", "api", "views", "ws")
    async with open_view("a.ipynb") as view:
        await asyncio.to_thread(agent.run, "edit three cells")
        listing = await api("GET", "changes", params={"path": "a.ipynb"})
        [turn] = listing["turns"]
        assert (turn["session"], turn["turn"]) == (agent.session_id, 1)
        rows = turn["rows"]
        assert [(r["cell_id"], r["kind"], r["hunk"], r["status"]) for r in rows] == [
            (ids[0], "source", 0, "pending"), (ids[1], "source", 0, "pending"),
            (ids[2], "source", 0, "pending"), (ids[2], "source", 1, "pending")]
        assert (await api("GET", "changes", params={"session": agent.session_id}))["turns"][0]["rows"] == rows

        body = {"session": agent.session_id, "turn": 1}
        assert (await api("POST", "changes", "keep", body={**body, "only": [ids[0]]}))["kept"] == [rows[0]["id"]]
        undone = await api("POST", "changes", "undo", body={**body, "only": [ids[1], rows[3]["id"]]})
        assert undone == {"session": agent.session_id, "turn": 1, "undone": [rows[1]["id"], rows[3]["id"]],
                          "refused": []}
        expected = ["x = 2", "def f(y):\n    return y", "ONE\ntwo\nthree\nfour\nfive"]
        assert sources(view) == expected  # in the open view when the answer comes
        assert disk_sources(path) == expected  # and saved by the room
        events = [json.loads(await asyncio.wait_for(views.read_message(), 5)) for _ in range(2)]
        assert [(e["type"], e["session"], e["path"], e["pending"]) for e in events] == [  # after keep, after undo
            ("changes", agent.session_id, "a.ipynb", 3), ("changes", agent.session_id, "a.ipynb", 1)]

        redone = await api("POST", "changes", "redo", body={**body, "only": None})
        assert sorted(redone["redone"]) == sorted([rows[1]["id"], rows[3]["id"]])
        assert sources(view)[1:] == ["def f(y):\n    return y * 2", "ONE\ntwo\nthree\nfour\nFIVE"]

        typed = view.ycells[1]["source"]
        typed.insert(len(typed), "  # mine")  # the user types in cell b: its undo is refused
        await until(lambda: saved(path, 1).endswith("# mine"), what="the room to save the typing")
        refused = await api("POST", "changes", "undo", body={**body, "only": None})
        assert [r["id"] for r in refused["refused"]] == [rows[1]["id"]]
        assert "changed since" in refused["refused"][0]["reason"]
        assert sources(view) == ["x = 2", "def f(y):\n    return y * 2  # mine", "one\ntwo\nthree\nfour\nfive"]

        await api("POST", "changes", "keep", body={**body, "only": None})
        assert (await api("GET", "changes", params={"path": "a.ipynb"}))["turns"] == []  # nothing pending
    views.close()


def saved(path, index: int) -> str:
    try:
        return disk_sources(path)[index]
    except (ValueError, IndexError):  # read while the room writes it
        return ""


async def test_routes_need_a_login_and_a_valid_body(jp_serverapp, jp_fetch, api):
    with pytest.raises(HTTPClientError) as denied:
        await jp_fetch("nbagent", "api", "changes", params={"path": "a.ipynb"}, headers={"Authorization": ""})
    assert denied.value.code == 403
    with pytest.raises(HTTPClientError) as bad:
        await api("POST", "changes", "undo", body={"session": "x"})
    assert bad.value.code == 400
    with pytest.raises(HTTPClientError) as unknown:
        await api("POST", "changes", "undo", body={"session": "nosuch", "turn": 1, "only": None})
    assert unknown.value.code == 404


@pytest.fixture
def connect(jp_ws_fetch):
    from .conftest import Client

    opened = []

    async def open_(session_id: str):
        client = Client(await jp_ws_fetch("nbagent", "api", "sessions", session_id, "ws"))
        opened.append(client)
        return client

    yield open_
    for client in opened:
        client.ws.close()


async def test_a_panel_session_is_reviewed_through_its_agent(jp_serverapp, jp_root_dir, api, connect, model):
    (jp_root_dir / "notes.txt").write_text("red\ngreen\nblue\nwhite\n")
    model.enqueue(Reply(tool_calls=[Call("write_file", {"path": "notes.txt", "content": "RED\ngreen\nblue\nWHITE\n"},
                                         id="call_write")]), Reply(text="Shouted."))
    sid = (await api("POST", "sessions", body={}))["id"]
    client = await connect(sid)
    await client.next()
    await client.send(type="prompt", text="shout the edges")
    await client.until("approval_request")
    await client.send(type="approval", call_id="call_write", decision="approve")
    await client.until("turn_end")
    [turn] = (await api("GET", "changes", params={"path": "notes.txt"}))["turns"]
    first = turn["rows"][0]
    done = await api("POST", "changes", "undo", body={"session": sid, "turn": 1, "only": [first["id"]]})
    assert done["undone"] == [first["id"]] and done["refused"] == []
    assert (jp_root_dir / "notes.txt").read_text() == "red\ngreen\nblue\nWHITE\n"
    mark = await client.until("checkpoint", action="undone")
    assert (mark["turn"], mark["rows"], mark["files"]) == (1, [first["id"]], ["notes.txt"])
    changes = await client.until("changes")
    assert (changes["session"], changes["path"], changes["pending"]) == (sid, "notes.txt", 1)
    history = await api("GET", "sessions", sid, "messages")
    assert "undid part of turn 1" in json.dumps(history)
