"""Undo and redo of notebook changes while the notebook is open in a collaborating client.

The agent runs in the server's process, so its notebook edits and its undo go through the store
the extension registers: the room's live document when a client has the notebook open. The room
logs "Out-of-band changes" whenever it has to reload a file written behind its back; an undo
through the live document never makes it do that, and the client's cells keep their ids.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

from nbagent import Agent
from nbagent.checkpoints import CheckpointConflict, CheckpointError
from nbagent.jupyter.kernel import server_client as server_link
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

from .live_helpers import disk_sources, sources, until, write_notebook
from .test_live_notebooks import jp_server_config, open_view  # noqa: F401  (the RTC server and its client)

pytestmark = [pytest.mark.process, pytest.mark.integration]

RELOADED = "Out-of-band changes"


@pytest.fixture
def agent_for(jp_root_dir):
    made = []

    def make(*replies):
        agent = Agent(model=ScriptedModel(list(replies)), workspace=jp_root_dir, approval="auto")
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


def ids_of(view) -> list[str]:
    return [str(c["id"]) for c in view.ycells]


def disk_ids(path) -> list[str]:
    return [c["id"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def type_in(view, index: int, text: str) -> None:
    """The user types ``text`` at the end of a cell (pycrdt counts UTF-8 bytes: keep it ASCII)."""
    source = view.ycells[index]["source"]
    source.insert(len(source), text)


def room_reloaded(caplog, name: str) -> bool:
    """Whether the room has reloaded a file written behind its back, and finished.

    Its file poll logs "Out-of-band changes", reads the file (a contents "get" event) and replaces
    what differs; the poll's next "get" comes after that replacement."""
    messages = [r.getMessage() for r in caplog.records]
    starts = [i for i, m in enumerate(messages) if RELOADED in m]
    gets = [m for m in messages[starts[-1]:] if "'action': 'get'" in m and f"'path': '{name}'" in m] if starts else []
    return len(gets) >= 2


def reloads(caplog) -> int:
    return sum(RELOADED in r.getMessage() for r in caplog.records)


async def test_undo_and_redo_of_cell_edits_go_through_the_live_document(jp_serverapp, jp_root_dir, open_view,
                                                                         agent_for, caplog):
    ids = write_notebook(jp_root_dir, "a.ipynb", [("markdown", "# Title"), ("code", "x = 1"), ("code", "y = 2"),
                                                  ("code", "untouched")])
    agent = agent_for(Reply(tool_calls=[Call("notebook_read", {"path": "a.ipynb"})]), Reply(tool_calls=[
        Call("notebook_edit", {"path": "a.ipynb", "cell_id": ids[1], "source": "x = 10"}),
        Call("notebook_insert", {"path": "a.ipynb", "cell_type": "code", "source": "z = 3", "after_cell_id": ids[2]}),
        Call("notebook_delete", {"path": "a.ipynb", "cell_id": ids[0]}),
        Call("notebook_move", {"path": "a.ipynb", "cell_id": ids[2]}),
    ]), "Done.")
    path = jp_root_dir / "a.ipynb"
    async with open_view("a.ipynb") as view:
        before = sources(view)
        await asyncio.to_thread(agent.run, "edit, insert, delete and move cells")
        after, after_ids = sources(view), ids_of(view)
        assert after == ["y = 2", "x = 10", "z = 3", "untouched"]
        assert agent.checkpoints().iloc[0]["files"] == ["a.ipynb"]  # the room's save was waited for

        restored = await asyncio.to_thread(agent.undo)
        assert restored.files == ["a.ipynb"]
        assert sources(view) == before and ids_of(view) == ids  # in the open view when undo returns
        assert disk_sources(path) == before and disk_ids(path) == ids  # and saved by the room
        await asyncio.to_thread(agent.redo)
        assert sources(view) == after and ids_of(view) == after_ids
        assert disk_sources(path) == after
        await asyncio.to_thread(agent.undo)  # the room's formatting of the file is no conflict
        assert sources(view) == before and ids_of(view) == ids
        type_in(view, 1, "  # mine")  # the user types in a cell the turn changed: redo refuses
        with pytest.raises(CheckpointError, match="a.ipynb"):
            await asyncio.to_thread(agent.redo)
        assert sources(view)[1] == "x = 1  # mine"
    assert reloads(caplog) == 0, "the room reloaded a file written behind its back"


async def test_a_notebook_the_turn_created_is_deleted_and_comes_back_in_its_open_view(
        jp_serverapp, jp_root_dir, open_view, agent_for, caplog):
    agent = agent_for(Reply(tool_calls=[Call("notebook_insert", {"path": "new.ipynb", "cell_type": "code",
                                                                  "source": "made = 1"})]), "Created.")
    path = jp_root_dir / "new.ipynb"
    await asyncio.to_thread(agent.run, "make a notebook")
    created = path.read_bytes()
    async with open_view("new.ipynb") as view:
        made_ids = ids_of(view)
        await asyncio.to_thread(agent.undo)
        assert not path.exists()
        await asyncio.to_thread(agent.redo)
        assert path.read_bytes() == created  # the file comes back exactly; the room reloads it
        await until(lambda: room_reloaded(caplog, path.name), what="the room to reload the file that is back")
        assert sources(view) == ["made = 1"] and ids_of(view) == made_ids
        type_in(view, 0, "\nmore = 2")  # the open view is the file's again: its edits are saved
        await until(lambda: disk_sources(path) == ["made = 1\nmore = 2"], what="the room to save the file")
        assert disk_ids(path) == made_ids


async def test_a_notebook_the_turn_deleted_comes_back_with_its_cells_and_the_room_saves_it(
        jp_serverapp, jp_root_dir, open_view, agent_for, caplog):
    ids = write_notebook(jp_root_dir, "gone.ipynb", [("markdown", "# Keep me"), ("code", "k = 1")])
    path = jp_root_dir / "gone.ipynb"
    original = path.read_bytes()
    agent = agent_for(Reply(tool_calls=[Call("bash", {"command": "rm gone.ipynb"})]), "Deleted.")
    async with open_view("gone.ipynb") as view:
        await asyncio.to_thread(agent.run, "delete the notebook")
        assert not path.exists()
        restored = await asyncio.to_thread(agent.undo)
        assert restored.files == ["gone.ipynb"] and path.read_bytes() == original
        await until(lambda: room_reloaded(caplog, path.name), what="the room to reload the file that is back")
        assert sources(view) == ["# Keep me", "k = 1"] and ids_of(view) == ids
        type_in(view, 1, "\nk += 1")
        await until(lambda: disk_sources(path) == ["# Keep me", "k = 1\nk += 1"], what="the room's save")
        assert [c.id for c in nbformat.read(path, as_version=4).cells] == ids
        with pytest.raises(CheckpointConflict, match="gone.ipynb"):  # the user's edit since the undo
            await asyncio.to_thread(agent.redo)
        await asyncio.to_thread(agent.redo, True)
        assert not path.exists()


async def test_nbagent_undo_in_a_terminal_restores_an_open_notebook_through_the_server(
        jp_serverapp, jp_root_dir, open_view, agent_for, caplog):
    ids = write_notebook(jp_root_dir, "cli.ipynb", [("code", "a = 1"), ("code", "b = 2")])
    agent = agent_for(Reply(tool_calls=[Call("notebook_read", {"path": "cli.ipynb"})]), Reply(tool_calls=[
        Call("notebook_edit", {"path": "cli.ipynb", "cell_id": ids[0], "source": "a = 100"}),
        Call("notebook_delete", {"path": "cli.ipynb", "cell_id": ids[1]})]), "Done.")
    path = jp_root_dir / "cli.ipynb"
    # A terminal outside JupyterLab: it finds the server through Jupyter's runtime directory only.
    env = {k: v for k, v in os.environ.items() if k != server_link.ENV_VAR}
    nbagent = Path(sys.executable).with_name("nbagent")

    async def cli(*args: str) -> str:
        proc = await asyncio.create_subprocess_exec(str(nbagent), *args, "--workspace", str(jp_root_dir), env=env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        assert proc.returncode == 0, (out + err).decode()
        return (out + err).decode()

    async with open_view("cli.ipynb") as view:
        await asyncio.to_thread(agent.run, "change the notebook")
        after_ids = ids_of(view)
        printed = await cli("undo")
        assert "undid turn 1" in printed, printed
        await until(lambda: sources(view) == ["a = 1", "b = 2"], what="the CLI's undo in the open view")
        assert ids_of(view) == ids and disk_ids(path) == ids  # saved by the room before the CLI ended
        printed = await cli("redo")
        assert "redid turn 1" in printed, printed
        await until(lambda: sources(view) == ["a = 100"], what="the CLI's redo in the open view")
        assert ids_of(view) == after_ids and disk_sources(path) == ["a = 100"]
    assert reloads(caplog) == 0, "the CLI wrote the file behind the room's back"
