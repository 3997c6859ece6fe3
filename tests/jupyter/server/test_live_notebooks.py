"""Live notebooks with jupyter-collaboration: a second collaborating client stands in for the open view.

The agent's notebook tools run as they do in the server (on a worker thread, through the store the
extension registers); the client's YNotebook is what JupyterLab would show.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from contextlib import asynccontextmanager

import nbformat
import pytest
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from tornado.httpclient import HTTPClientError

from nbagent.errors import ToolError
from nbagent.tools import notebook as nbt

from .live_helpers import (RUN_CELLS, check_run_result, disk_sources, sources, start_kernel, tool_ctx, until,
                          write_notebook)

pytestmark = pytest.mark.integration


@pytest.fixture
def jp_server_config(jp_root_dir, model):
    return {
        "ServerApp": {"jpserver_extensions": {"nbagent.jupyter.server": True, "jupyter_server_ydoc": True,
                                              "jupyter_server_fileid": True}},
        "NbAgentServer": {"model_factory": lambda session_id: model},
        "SQLiteYStore": {"db_path": str(jp_root_dir / ".jupyter_ystore.db")},
        "BaseFileIdManager": {"root_dir": str(jp_root_dir), "db_path": str(jp_root_dir / ".fid.db"),
                              "db_journal_mode": "OFF"},
        "YDocExtension": {"document_save_delay": 0.1, "file_poll_interval": 0.2, "document_cleanup_delay": 60},
    }


@pytest.fixture
def open_view(jp_fetch, jp_http_port, jp_base_url, jp_auth_header):
    """Open a notebook the way JupyterLab does: a collaboration session and a synced YNotebook."""

    @asynccontextmanager
    async def opened(path: str):
        response = await jp_fetch("api", "collaboration", "session", path, method="PUT",
                                  body=json.dumps({"format": "json", "type": "notebook"}))
        data = json.loads(response.body)
        room = f"{data['format']}:{data['type']}:{data['fileId']}"
        url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/collaboration/room/{room}?sessionId={data['sessionId']}"
        doc = YNotebook()
        async with aconnect_ws(url, headers=jp_auth_header) as ws, Provider(doc.ydoc, HttpxWebsocket(ws, room)):
            await until(lambda: len(doc.ycells) > 0, what="the view to sync")
            yield doc

    return opened


async def call(fn, *args, **kwargs):
    """A tool call as the agent makes it: on a worker thread."""
    return await asyncio.to_thread(fn, *args, **kwargs)


@pytest.mark.process
async def test_an_edit_arrives_in_the_open_view_and_then_on_disk(jp_serverapp, jp_root_dir, open_view):
    ids = write_notebook(jp_root_dir, "a.ipynb", [("markdown", "# Title"), ("code", "x = 1")])
    ctx = tool_ctx(jp_root_dir)
    async with open_view("a.ipynb") as view:
        text = await call(nbt.notebook_read, ctx, "a.ipynb")
        assert "read from the live document open in JupyterLab" in text
        started = time.perf_counter()
        result = await call(nbt.notebook_edit, ctx, "a.ipynb", ids[1], "x = 2\nprint(x)")
        await until(lambda: sources(view)[1] == "x = 2\nprint(x)", what="the edit in the view")
        print(f"\nedit visible in the collaborating view {1000 * (time.perf_counter() - started):.1f} ms after the call")
        assert "written to the live document" in result
        inserted = await call(nbt.notebook_insert, ctx, "a.ipynb", "code", "y = 3", after_cell_id=ids[1])
        new_id = re.search(r"inserted code cell (\S+)", inserted).group(1)
        await until(lambda: sources(view) == ["# Title", "x = 2\nprint(x)", "y = 3"], what="the insert")
        assert [c["id"] for c in view.ycells][:2] == ids and view.ycells[2]["id"] == new_id
        await until(lambda: disk_sources(jp_root_dir / "a.ipynb") == ["# Title", "x = 2\nprint(x)", "y = 3"],
                    what="the room's save")
        await call(nbt.notebook_move, ctx, "a.ipynb", new_id)  # a delete plus an insert of a copy
        await until(lambda: sources(view) == ["y = 3", "# Title", "x = 2\nprint(x)"], what="the move")
        assert view.ycells[0]["id"] == new_id
        await call(nbt.notebook_delete, ctx, "a.ipynb", ids[0])
        await until(lambda: sources(view) == ["y = 3", "x = 2\nprint(x)"], what="the delete")


@pytest.mark.process
async def test_a_cell_the_user_changed_is_refused_and_their_typing_elsewhere_survives(jp_serverapp, jp_root_dir,
                                                                                      open_view):
    ids = write_notebook(jp_root_dir, "b.ipynb", [("code", "a = 1"), ("code", "b = 2"), ("code", "c = 3")])
    ctx = tool_ctx(jp_root_dir)
    async with open_view("b.ipynb") as view:
        await call(nbt.notebook_read, ctx, "b.ipynb")
        view.ycells[0]["source"].insert(5, "0")  # the user types "a = 10" in the first cell
        live = await jp_serverapp.web_app.settings["jupyter_server_ydoc"].get_document(
            path="b.ipynb", content_type="notebook", file_format="json", copy=False)
        await until(lambda: str(live.ycells[0]["source"]) == "a = 10", what="the keystroke on the server")
        with pytest.raises(ToolError, match="changed since you read it.*Read it again"):
            await call(nbt.notebook_edit, ctx, "b.ipynb", ids[0], "a = 100")
        # A keystroke in another cell right before the agent's edit: both survive.
        view.ycells[2]["source"].insert(0, "# mine\n")
        await call(nbt.notebook_edit, ctx, "b.ipynb", ids[1], "b = 20")
        await until(lambda: sources(view) == ["a = 10", "b = 20", "# mine\nc = 3"], what="both edits")
        # A range edit keeps what the user typed elsewhere in the same cell since the read.
        await call(nbt.notebook_edit, ctx, "b.ipynb", ids[2], "c = 30", old_text="c = 3")
        await until(lambda: sources(view)[2] == "# mine\nc = 30", what="the range edit")
        await until(lambda: disk_sources(jp_root_dir / "b.ipynb") == ["a = 10", "b = 20", "# mine\nc = 30"],
                    what="the save")


@pytest.mark.process
async def test_non_ascii_sources_edit_by_their_characters(jp_serverapp, jp_root_dir, open_view):
    ids = write_notebook(jp_root_dir, "c.ipynb", [("markdown", "Größe: 3 µm — ✓ 日本語 😀 end")])
    ctx = tool_ctx(jp_root_dir)
    async with open_view("c.ipynb") as view:
        await call(nbt.notebook_read, ctx, "c.ipynb")
        await call(nbt.notebook_edit, ctx, "c.ipynb", ids[0], "Größe: 4 µm — ✓ 日本 😀 énd")
        await until(lambda: sources(view) == ["Größe: 4 µm — ✓ 日本 😀 énd"], what="the edit")
        await call(nbt.notebook_edit, ctx, "c.ipynb", ids[0], "ü", old_text="😀")
        await until(lambda: sources(view) == ["Größe: 4 µm — ✓ 日本 ü énd"], what="the range edit")


@pytest.mark.process
async def test_a_legacy_notebook_keeps_the_ids_the_agent_saw(jp_serverapp, jp_root_dir, open_view):
    write_notebook(jp_root_dir, "old.ipynb", [("code", "a = 1"), ("markdown", "text")], legacy=True)
    ctx = tool_ctx(jp_root_dir)
    async with open_view("old.ipynb"):
        text = await call(nbt.notebook_read, ctx, "old.ipynb")
        shown = re.findall(r'<cell id="([^"]+)"', text)
        assert len(set(shown)) == 2 and "nbformat 4.4" in text
        await call(nbt.notebook_edit, ctx, "old.ipynb", shown[1], "new text")

        def saved():
            data = json.loads((jp_root_dir / "old.ipynb").read_text(encoding="utf-8") or "{}")
            return data.get("nbformat_minor") == 5 and [c.get("id") for c in data["cells"]] == shown

        await until(saved, what="nbformat 4.5 with the ids shown on disk")


@pytest.mark.process
async def test_a_closed_notebook_is_edited_in_its_file(jp_serverapp, jp_root_dir):
    ids = write_notebook(jp_root_dir, "closed.ipynb", [("code", "a = 1")])
    ctx = tool_ctx(jp_root_dir)
    text = await call(nbt.notebook_read, ctx, "closed.ipynb")
    assert "read from the file" in text
    result = await call(nbt.notebook_edit, ctx, "closed.ipynb", ids[0], "a = 2")
    assert "written to" not in result
    assert nbformat.read(jp_root_dir / "closed.ipynb", as_version=4).cells[0].source == "a = 2"
    assert not any(p.name.startswith(".closed") for p in jp_root_dir.iterdir())  # no room was created


@pytest.mark.process
async def test_the_kernel_handler_needs_the_secret(jp_serverapp, jp_root_dir, jp_fetch, open_view):
    from nbagent.jupyter.kernel import server_client as server_link

    ext = jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]
    app = next(iter(ext))
    info_path = app.kernel_link.path
    assert info_path.stat().st_mode & 0o777 == 0o600
    info = json.loads(info_path.read_text())
    assert info["secret"] not in json.dumps(dict(__import__("os").environ))  # only the path is inherited
    ids = write_notebook(jp_root_dir, "k.ipynb", [("code", "k = 1")])
    body = json.dumps({"action": "read", "path": str(jp_root_dir / "k.ipynb")})
    for headers in ({}, {server_link.SECRET_HEADER: "x" * 43}):
        with pytest.raises(HTTPClientError) as err:
            await jp_fetch("nbagent", "api", "kernel", "notebooks", method="POST", body=body, headers=headers)
        assert err.value.code == 403
    ok = await jp_fetch("nbagent", "api", "kernel", "notebooks", method="POST", body=body,
                        headers={server_link.SECRET_HEADER: info["secret"]})
    assert ok.code == 200 and json.loads(ok.body)["snapshot"]["notebook"]["cells"][0]["id"] == ids[0]

    # The kernel side's store, as %agent uses it, edits the live document over HTTP.
    store = server_link.ServerNotebookStore(info["url"], info["secret"], kernel_id=None)
    ctx = tool_ctx(jp_root_dir)
    ctx.extras["notebook_stores"] = [store]
    async with open_view("k.ipynb") as view:
        text = await call(nbt.notebook_read, ctx, "k.ipynb")
        assert "live document" in text
        await call(nbt.notebook_edit, ctx, "k.ipynb", ids[0], "k = 2")
        await until(lambda: sources(view) == ["k = 2"], what="the kernel's edit in the view")


@pytest.mark.kernel
async def test_notebook_run_fills_outputs_in_the_open_view(jp_serverapp, jp_root_dir, jp_fetch, open_view):
    from nbagent.jupyter.kernel import server_client as server_link

    ids = write_notebook(jp_root_dir, "r.ipynb", RUN_CELLS)
    ctx = tool_ctx(jp_root_dir)
    async with open_view("r.ipynb") as view:
        kernel_id = await start_kernel(jp_fetch, "r.ipynb")
        text = await call(nbt.notebook_run, ctx, "r.ipynb", ids)
        check_run_result(text, ids)
        await until(lambda: view.ycells[1]["execution_count"] == 2 and len(view.ycells[2]["outputs"]),
                    what="the outputs in the view")
        outputs = view.get_cell(1)["outputs"]
        assert outputs[0]["output_type"] == "stream" and "".join(outputs[0]["text"]) == "42\n"
        assert outputs[1]["data"]["text/plain"] == "21"
        assert view.get_cell(2)["outputs"][0]["ename"] == "ZeroDivisionError"
        assert view.get_cell(3)["outputs"] == []
        # A kernel's agent never queues cells on its own kernel.
        app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
        body = json.dumps({"action": "run", "path": str(jp_root_dir / "r.ipynb"), "cell_ids": ids[:1],
                           "kernel_id": kernel_id})
        with pytest.raises(HTTPClientError) as err:
            await jp_fetch("nbagent", "api", "kernel", "notebooks", method="POST", body=body,
                           headers={server_link.SECRET_HEADER: app.kernel_link.secret})
        assert err.value.code == 409 and b"deadlock" in err.value.response.body


@pytest.mark.process
async def test_the_kernel_links_save_needs_the_secret_and_stays_in_the_workspace(jp_serverapp, jp_root_dir, jp_fetch):
    """``save`` (a turn's snapshot asks a tab to save first) is confined like read and apply: a path
    outside the workspace, or one that leaves it through a symlink, is answered "outside", untouched."""
    from nbagent.jupyter.kernel import server_client as server_link

    app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    secret = {server_link.SECRET_HEADER: app.kernel_link.secret}
    outside = jp_root_dir.parent / "theirs.ipynb"
    outside.write_text("{}")
    (jp_root_dir / "link.ipynb").symlink_to(outside)
    write_notebook(jp_root_dir, "mine.ipynb", [("code", "k = 1")])

    async def save(path, headers=secret) -> dict:
        body = json.dumps({"action": "save", "path": str(path)})
        reply = await jp_fetch("nbagent", "api", "kernel", "notebooks", method="POST", body=body, headers=headers)
        return json.loads(reply.body)

    with pytest.raises(HTTPClientError) as err:
        await save(jp_root_dir / "mine.ipynb", headers={})
    assert err.value.code == 403
    for path in (outside, jp_root_dir / "link.ipynb", jp_root_dir / ".." / "theirs.ipynb"):
        assert await save(path) == {"outside": True}, path
    assert outside.read_text() == "{}"
    assert await save(jp_root_dir / "mine.ipynb") == {"snapshot": None}  # no tab holds it: nothing to save


async def test_notebook_run_on_the_agents_own_kernel_is_refused_before_anyone_is_asked(jp_serverapp, jp_root_dir,
                                                                                       jp_fetch):
    """Issue 40, item 8: no approval card for a run that would be refused after the approval; the refusal
    says what to do instead. Another notebook's kernel is still asked about as before."""
    from nbagent import events as ev
    from nbagent.jupyter.kernel import server_client as server_link
    from nbagent.tools.approvals import Approvals

    app = next(iter(jp_serverapp.extension_manager.extension_apps["nbagent.jupyter.server"]))
    info = json.loads(app.kernel_link.path.read_text())
    own = write_notebook(jp_root_dir, "own.ipynb", [("code", "x = 1")])
    other = write_notebook(jp_root_dir, "other.ipynb", [("code", "y = 1")])
    own_kernel = await start_kernel(jp_fetch, "own.ipynb")
    await start_kernel(jp_fetch, "other.ipynb")
    tool = nbt.NOTEBOOK.tools[[t.name for t in nbt.NOTEBOOK.tools].index("notebook_run")]
    events: list = []
    ctx = tool_ctx(jp_root_dir).for_call("call_1")
    ctx.extras["notebook_stores"] = [server_link.ServerNotebookStore(info["url"], info["secret"], own_kernel)]
    approvals = Approvals(lambda: ctx.config, events.append)
    with pytest.raises(ToolError) as refused:
        await asyncio.wait_for(approvals.decide(tool, ctx, {"path": "own.ipynb", "cell_ids": own}), 30)
    assert not [e for e in events if isinstance(e, ev.ApprovalRequest)]
    assert "deadlock" in str(refused.value) and "kernel_run" in str(refused.value)
    assert "tell the user which cells to run" in str(refused.value)

    asked = asyncio.ensure_future(approvals.decide(tool, ctx, {"path": "other.ipynb", "cell_ids": other}))
    await until(lambda: [e for e in events if isinstance(e, ev.ApprovalRequest)], timeout=30,
                what="the approval card for another notebook's kernel")
    approvals.resolve("call_1", "deny")
    assert await asked == "deny"
