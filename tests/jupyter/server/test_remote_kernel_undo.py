"""The panel's agent undoes what its notebook_run did to the notebook's kernel: the record lives in that
kernel (nbagent.jupyter.kernel.watch) and undo, redo and the conflict check reach it by silent lines."""

from __future__ import annotations

import asyncio

import pytest

from nbagent.testing.replies import Call, Reply

from .live_helpers import start_kernel, write_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.integration]


@pytest.fixture
def jp_server_config(model):
    return {
        "ServerApp": {"jpserver_extensions": {"nbagent.jupyter.server": True}},
        "NbAgentServer": {"model_factory": lambda session_id: model, "idle_close_seconds": 0.2,
                          "agent_options": {"memory": False, "kernel_undo_max_bytes": 1_000_000}},
    }


class UserKernel:
    """The user's side of the notebook's kernel: code run as a cell of theirs would be."""

    def __init__(self, serverapp, kernel_id: str):
        self.client = serverapp.kernel_manager.get_kernel(kernel_id).client()
        self.client.start_channels()

    async def run(self, code: str) -> str:
        out: list[str] = []

        def hook(msg):
            if msg["header"]["msg_type"] == "execute_result":
                out.append(msg["content"]["data"]["text/plain"])

        await self.client.wait_for_ready(timeout=30)
        reply = await self.client.execute_interactive(code, output_hook=hook, timeout=30)
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(out)

    def close(self) -> None:
        self.client.stop_channels()


async def _checkpoint(client, timeout: float = 60) -> dict:
    """The next checkpoint event; an error event (a refused undo) fails at once, with its message."""
    while True:
        event = await client.next(timeout)
        assert event["type"] != "error", f"refused: {event.get('message')}"
        if event["type"] == "checkpoint":
            return event


@pytest.fixture
async def notebook(jp_root_dir, jp_fetch, jp_serverapp):
    ids = write_notebook(jp_root_dir, "work.ipynb", [("code", "x = 'agent'\nadded = 1"),
                                                    ("code", "big = bytes(600_000)\nx = 'again'")])
    kernel_id = await start_kernel(jp_fetch, "work.ipynb")
    user = UserKernel(jp_serverapp, kernel_id)
    yield ids, user
    user.close()


async def _panel(api, connect):
    """A new session's panel socket, past its first (state) message."""
    client = await connect((await api("POST", "sessions"))["id"])
    await client.next()
    return client


async def _agent_runs(client, model, cell_id: str, call_id: str, prompt: str = "run it") -> dict:
    model.enqueue(Reply(tool_calls=[Call("notebook_run", {"path": "work.ipynb", "cell_ids": [cell_id]}, id=call_id)]),
                  Reply(text="Ran it."))
    await client.send(type="prompt", text=prompt)
    await client.until("approval_request", timeout=30)
    await client.send(type="approval", call_id=call_id, decision="approve")
    changed = await client.until("kernel_changed", timeout=60)
    taken = await client.until("checkpoint", timeout=30)
    await client.until("turn_end", timeout=30)
    return {"changed": changed, "taken": taken}


async def test_panel_undo_and_redo_restore_the_kernel_variables(api, connect, model, notebook):
    ids, user = notebook
    await user.run("x = 'user'\nbig = 'small'")
    client = await _panel(api, connect)

    first = await _agent_runs(client, model, ids[0], "call_1")
    assert (first["changed"]["added"], first["changed"]["rebound"]) == (["added"], ["x"])
    assert first["taken"]["action"] == "taken" and first["taken"]["undo_turn"] == 1
    assert await user.run("x") == "'agent'"

    await client.send(type="undo")
    undone = await _checkpoint(client)
    assert (undone["action"], undone["turn"], undone["redo_turn"]) == ("undone", 1, 1)
    assert (undone["names"], undone["not_restored"]) == (["added", "x"], [])  # what the panel shows
    assert await user.run("x") == "'user'"
    assert await user.run("'added' in dir()") == "False"

    await client.send(type="redo")
    redone = await _checkpoint(client)
    assert (redone["action"], redone["undo_turn"]) == ("redone", 1)
    assert await user.run("(x, added)") == "('agent', 1)"


async def test_a_name_the_user_rebound_since_is_not_overwritten_without_asking(api, connect, model, notebook):
    ids, user = notebook
    await user.run("x = 'user'")
    client = await _panel(api, connect)
    await _agent_runs(client, model, ids[0], "call_1")
    await user.run("x = 'mine, later'")

    await client.send(type="undo")
    refused = await client.until("error", timeout=60)
    assert refused["kind"] == "checkpoint" and "you changed these kernel variables since: x" in refused["message"]
    assert await user.run("(x, added)") == "('mine, later', 1)"  # nothing restored, files neither

    await client.send(type="undo", force=True)
    assert (await _checkpoint(client))["action"] == "undone"
    assert await user.run("x") == "'user'"


async def test_the_memory_cap_drops_old_values_and_says_so(api, connect, model, notebook, jp_serverapp):
    ids, user = notebook
    await user.run("x = 'user'\nbig = bytes(700_000)")
    sid = (await api("POST", "sessions"))["id"]
    client = await connect(sid)
    await client.next()
    await _agent_runs(client, model, ids[1], "call_1")  # rebinds big (its 700 kB kept for undo) and x
    second = await _agent_runs(client, model, ids[1], "call_2")  # big again: 1.3 MB kept > the 1 MB cap
    assert second["changed"]["rebound"] == ["big"]
    assert sorted(second["changed"]["dropped"]) == ["big (turn 1)", "x (turn 1)"]  # turn 1's, the oldest

    await client.send(type="undo")
    undone = await _checkpoint(client)
    assert (undone["turn"], undone["names"], undone["not_restored"]) == (2, ["big"], [])
    assert await user.run("len(big)") == "600000"  # turn 1's value, kept by turn 2's record
    await client.send(type="undo")
    undone = await _checkpoint(client)
    assert undone["turn"] == 1 and undone["names"] == []
    assert undone["not_restored"] == ["big (its old value was released by the memory cap)",
                                      "x (its old value was released by the memory cap)"]
    assert await user.run("(x, len(big))") == "('again', 600000)"  # left as they were
    restored = _live_agent(jp_serverapp, sid).kernel_changes(1)  # agent.kernel_changes reads the kernel's record
    assert sorted(restored[restored.change == "rebound"].name) == ["big", "x"]
    assert not restored.restorable.any() and restored.undone.all()


async def test_undo_waits_for_no_busy_kernel_and_restores_nothing(api, connect, model, notebook, jp_root_dir):
    ids, user = notebook
    await user.run("x = 'user'")
    client = await _panel(api, connect)
    await _agent_runs(client, model, ids[0], "call_1")
    before = (jp_root_dir / "work.ipynb").read_text()
    sleeping = asyncio.ensure_future(user.run("import time\ntime.sleep(3)\n'slept'"))
    await asyncio.sleep(0.5)
    await client.send(type="undo")
    refused = await client.until("error", timeout=30)
    assert "the kernel is busy" in refused["message"] and "Nothing was restored" in refused["message"]
    assert (jp_root_dir / "work.ipynb").read_text() == before  # the turn's file stayed as well
    assert await sleeping == "'slept'"
    await client.send(type="undo")
    assert (await _checkpoint(client))["action"] == "undone"
    assert await user.run("x") == "'user'"


async def test_a_restarted_kernel_lost_the_record_and_undo_says_so(api, connect, model, notebook, jp_fetch,
                                                                   jp_serverapp, jp_root_dir):
    ids, user = notebook
    client = await _panel(api, connect)
    before = (jp_root_dir / "work.ipynb").read_text()
    await _agent_runs(client, model, ids[0], "call_1")
    kernel_id = jp_serverapp.kernel_manager.list_kernel_ids()[0]
    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="")
    await client.send(type="undo")
    undone = await _checkpoint(client)
    assert undone["action"] == "undone" and undone["names"] == []  # the files are back all the same
    assert undone["not_restored"] == [f"{name} (this kernel holds no record of these calls: it was restarted "
                                      "since, or the records were released)" for name in ("added", "x")]
    assert (jp_root_dir / "work.ipynb").read_text() == before


REPLAY_CELLS = [("code", "data = [1, 2, 3]"),
                ("code", "import os\nassert 'NB_STOP' not in os.environ, 'stop here'"),
                ("code", "tail = len(data)"),
                ("code", "data.append(99)")]


@pytest.fixture
async def replay_notebook(jp_root_dir, jp_fetch, jp_serverapp):
    """The user ran the notebook's first three cells; the agent's notebook_run then runs the fourth,
    which changes ``data`` in place (undo cannot put that back)."""
    ids = write_notebook(jp_root_dir, "work.ipynb", REPLAY_CELLS)
    kernel_id = await start_kernel(jp_fetch, "work.ipynb")
    user = UserKernel(jp_serverapp, kernel_id)
    for _, source in REPLAY_CELLS[:3]:
        await user.run(source)
    yield ids, user
    user.close()


async def _undo_offers_a_plan(api, connect, model, ids) -> tuple:
    client = await _panel(api, connect)
    ran = await _agent_runs(client, model, ids[3], "call_1")
    assert ran["changed"]["mutated"] == ["data"]
    await client.send(type="undo")
    undone = await _checkpoint(client)
    return client, undone


async def test_panel_undo_offers_the_kernels_replay_plan_and_replay_rebuilds_the_variable(
        api, connect, model, replay_notebook):
    ids, user = replay_notebook
    client, undone = await _undo_offers_a_plan(api, connect, model, ids)
    assert undone["not_restored"] == ["data (changed in place)"]
    # Planned in the kernel: its history (counts 1-3, the user's) matched to the notebook's cells (their ids).
    assert [(c["execution_count"], c["cell_id"], c["origin"]) for c in undone["replay"]] == [
        (1, ids[0], "history+notebook"), (2, ids[1], "history+notebook"), (3, ids[2], "history+notebook")]
    assert [c["line"] for c in undone["replay"]] == ["data = [1, 2, 3]", "import os", "tail = len(data)"]
    assert await user.run("data") == "[1, 2, 3, 99]"  # nothing runs before the user confirms

    await user.run("del tail")
    await client.send(type="replay", turn=1)
    replayed = await client.until("kernel_replayed", timeout=60)
    assert (replayed["turn"], replayed["ran"], replayed["failed"], replayed["error"]) == (1, [1, 2, 3], None, None)
    assert replayed["turn_id"] == undone["turn_id"]
    assert await user.run("(data, tail)") == "([1, 2, 3], 3)"  # rebuilt by the user's own cells

    await client.send(type="replay", turn=1)  # the plan ran: it is no longer on offer
    refused = await client.until("error", timeout=30)
    assert "no restart-and-replay plan is on offer for turn 1" in refused["message"]


async def test_replay_stops_at_the_first_error_and_names_the_cell(api, connect, model, replay_notebook):
    ids, user = replay_notebook
    client, undone = await _undo_offers_a_plan(api, connect, model, ids)
    await user.run("os.environ['NB_STOP'] = '1'\ndel tail")  # the second cell fails when run again
    await client.send(type="replay", turn=1)
    replayed = await client.until("kernel_replayed", timeout=60)
    assert (replayed["ran"], replayed["failed"], replayed["failed_cell_id"]) == ([1], 2, ids[1])
    assert replayed["error"] == "AssertionError: stop here"
    assert await user.run("(data, 'tail' in dir())") == "([1, 2, 3], False)"  # stopped there: cell 3 did not run


async def test_replay_is_refused_while_the_kernel_is_busy(api, connect, model, replay_notebook):
    ids, user = replay_notebook
    client, undone = await _undo_offers_a_plan(api, connect, model, ids)
    sleeping = asyncio.ensure_future(user.run("import time\ntime.sleep(3)\n'slept'"))
    await asyncio.sleep(0.5)
    await client.send(type="replay", turn=1)
    refused = await client.until("error", timeout=30)
    assert "the kernel is busy" in refused["message"] and "did not run" in refused["message"]
    assert await sleeping == "'slept'"
    assert await user.run("data") == "[1, 2, 3, 99]"  # nothing was cleared or run
    await client.send(type="replay", turn=1)  # still on offer: runs once the kernel is idle
    assert (await client.until("kernel_replayed", timeout=60))["ran"] == [1, 2, 3]
    assert await user.run("data") == "[1, 2, 3]"


def _live_agent(serverapp, session_id: str):
    app = next(iter(serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    return app.hub.live[session_id].agent


OWNERS = ("import nbagent.jupyter.kernel.watch as w\n"
          "sorted(o for owners in w._LEDGERS.values() for o in owners)")


async def test_the_records_outlive_the_panels_agent_and_go_with_the_deleted_session(api, connect, model, notebook,
                                                                                 jp_serverapp):
    """The panel's agent closes a moment after its last tab; the session is opened again later and its
    Undo still restores the kernel's names. Deleting the session releases its records in the kernel."""
    ids, user = notebook
    await user.run("x = 'user'")
    sid = (await api("POST", "sessions"))["id"]
    client = await connect(sid)
    await client.next()
    await _agent_runs(client, model, ids[0], "call_1")
    assert await user.run("x") == "'agent'"
    client.ws.close()
    app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    for _ in range(100):  # idle_close_seconds is 0.2 here
        if not app.hub.is_open(sid):
            break
        await asyncio.sleep(0.1)
    assert not app.hub.is_open(sid), "the agent stays open with no tab"
    assert await user.run(OWNERS) == repr([sid])  # kept in the kernel for a resume

    again = await connect(sid)
    await again.next()
    await again.send(type="undo")
    undone = await _checkpoint(again)
    assert (undone["turn"], undone["names"], undone["not_restored"]) == (1, ["added", "x"], [])
    assert await user.run("x") == "'user'"
    again.ws.close()

    await api("DELETE", "sessions", sid)
    for _ in range(100):  # released in the background, after the DELETE's answer
        if await user.run(OWNERS) == "[]":
            break
        await asyncio.sleep(0.1)
    assert await user.run(OWNERS) == "[]"


async def test_looking_for_a_sessions_records_imports_nothing_into_other_kernels(notebook, jp_serverapp):
    """A session opened again asks every kernel for its records with a line that does nothing where the
    watcher never ran: a kernel that never met nbagent does not import it."""
    _, user = notebook
    assert await user.run("import sys\n'nbagent' in sys.modules") == "False"
    app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    (kernel_id,) = app.notebooks.kernel_ids()
    answer = await app.notebooks.akernel_action(kernel_id, "targets", {"owner": "someone", "if_loaded": True})
    assert "error" in answer and "records" not in answer
    assert await user.run("'nbagent' in sys.modules") == "False"
