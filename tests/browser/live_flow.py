"""The live-notebook browser check, run with collaboration on and off (two test modules).

The agent's notebook tools run here through the kernel's link to the server (what ``%agent`` in a
kernel of that server uses): the server is the one writer, and the open notebook must show each
edit at once, keep the user's typing, save without "File Changed", and show notebook_run's outputs.
"""

from __future__ import annotations

import json
import re
import statistics
import time

import nbformat

from nbagent.config import AgentConfig
from nbagent.jupyter.kernel.server_client import ServerNotebookStore
from nbagent import Agent
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel
from nbagent.tools import nbdoc
from nbagent.tools import notebook as nbt
from nbagent.tools.context import ToolContext
from nbagent.workspace.root import Workspace

MODEL = "window.jupyterapp.shell.currentWidget.context.model.sharedModel"


def agent_context(lab) -> ToolContext:
    (info_file,) = lab.runtime.glob("nbagent-server-*.json")
    info = json.loads(info_file.read_text())
    ctx = ToolContext(workspace=Workspace(lab.root), config=AgentConfig.load(workspace=lab.root),
                      emit=lambda event: None, processes=None)
    ctx.extras["notebook_stores"] = [ServerNotebookStore(info["url"], info["secret"], kernel_id=None)]
    return ctx


def open_notebook(page, lab, name: str) -> None:
    page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}")
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
    page.wait_for_function(f"() => window.jupyterapp?.shell?.currentWidget?.context?.isReady && "
                           f"{MODEL}.cells.length > 0", timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    # The kernel starts with the notebook; a kernel choice dialog may show first: accept it.
    idle = page.locator(".jp-StatusBar-Widget:has-text('Idle')")
    kernel_dialog = page.locator(".jp-Dialog:has-text('Kernel') .jp-mod-accept")
    idle.or_(kernel_dialog).first.wait_for(timeout=60_000)
    if kernel_dialog.count():
        kernel_dialog.click()
        idle.wait_for(timeout=60_000)


def model_sources(page) -> list[str]:
    return page.evaluate(f"() => {MODEL}.cells.map(c => c.source)")


def wait_sources(page, expected: list[str], timeout: float = 10_000) -> None:
    page.wait_for_function(f"(want) => JSON.stringify({MODEL}.cells.map(c => c.source)) === JSON.stringify(want)",
                           arg=expected, timeout=timeout)


def edit_latency_ms(page, ctx, name: str, cell_id: str, source: str) -> float:
    """Milliseconds from the tool call to the new source in the open view's model (wall clocks)."""
    page.evaluate(f"""(target) => {{
        window.__seen = null;
        const m = {MODEL};
        const check = () => {{ if (!window.__seen && m.cells.some(c => c.source === target)) window.__seen = Date.now(); }};
        m.ydoc.on('afterTransaction', check);
        window.__stopWatch = () => m.ydoc.off('afterTransaction', check);
    }}""", source)
    started = time.time() * 1000
    nbt.notebook_edit(ctx, name, cell_id, source)
    seen = page.wait_for_function("() => window.__seen").json_value()
    page.evaluate("() => window.__stopWatch()")
    return seen - started


def disk_sources(path) -> list[str]:
    try:
        return [c.source for c in nbformat.read(path, as_version=4).cells]
    except Exception:  # read mid-save
        return []


def wait_disk(path, expected: list[str]) -> None:
    deadline = time.monotonic() + 15
    while disk_sources(path) != expected:
        assert time.monotonic() < deadline, f"disk {disk_sources(path)} != model {expected}"
        time.sleep(0.05)


def no_dialog(page, shot, mode: str) -> None:
    dialogs = page.locator(".jp-Dialog")
    if dialogs.count():
        shot(f"live-notebook-{mode}-dialog")
        raise AssertionError(f"a dialog appeared: {dialogs.first.inner_text()[:300]!r}")


def run_live_flow(page, lab, shot, mode: str, model_server) -> None:
    name = f"live-{mode}.ipynb"
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_code_cell("print(x + 1)")]
    nbformat.write(nb, lab.root / name)
    ids = [c.id for c in nb.cells]
    open_notebook(page, lab, name)
    ctx = agent_context(lab)
    where = "the live document open in JupyterLab" if mode == "rtc" else "the notebook open in JupyterLab"
    deadline = time.monotonic() + 20
    while f"read from {where}" not in nbt.notebook_read(ctx, name):  # the tab reports once its model is ready
        assert time.monotonic() < deadline, f"reads never came from {where}"
        time.sleep(0.1)

    latencies = [edit_latency_ms(page, ctx, name, ids[1], f"x = {n}") for n in range(2, 9)]
    median = statistics.median(latencies)
    print(f"\n[{mode}] tool call -> edit in the open notebook: median {median:.0f} ms "
          f"(min {min(latencies):.0f}, max {max(latencies):.0f}, n={len(latencies)}; goal < 200 ms)")
    page.wait_for_selector(".jp-Notebook .jp-Cell:nth-child(2) .cm-content:has-text('x = 8')")

    # The user types in the third cell while the agent inserts a cell; then the user saves.
    page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type("  # mine")
    inserted = nbt.notebook_insert(ctx, name, "code", "y = x * 10", after_cell_id=ids[1])
    new_id = re.search(r"inserted code cell (\S+)", inserted).group(1)
    expected = ["# Title", "x = 8", "y = x * 10", "print(x + 1)  # mine"]
    wait_sources(page, expected)
    if mode == "rtc":
        # The room saves by itself; an explicit save in the ~100 ms between the room's write and the
        # new file hash reaching the tab meets jupyter-collaboration's own "File Changed" race, with or
        # without the agent. So the user saves once the room's save has reached the tab.
        wait_disk(lab.root / name, expected)
        page.wait_for_function(f"() => {MODEL}.getState('dirty') === false")
    page.keyboard.press("Control+s")
    wait_disk(lab.root / name, expected)
    no_dialog(page, shot, mode)

    # notebook_run fills the outputs of the open notebook.
    result = nbt.notebook_run(ctx, name, [ids[1], new_id, ids[2]])
    assert "ran 3 cell(s)" in result and "2" in result
    page.wait_for_selector(".jp-Notebook .jp-Cell:nth-child(4) .jp-OutputArea-output:has-text('9')")
    no_dialog(page, shot, mode)

    # The panel's chip says what goes with a prompt: this notebook and its active cell.
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content").click()
    page.click("li[data-id='nbagent-panel']")
    chip = page.locator(".jp-nbagent-context-chip")
    chip.filter(has_text=f"{name} · active cell").wait_for()
    shot(f"live-notebook-{mode}")

    # From the panel: an agent of the server itself edits the open notebook ("this cell" = cell 2).
    model_server.enqueue(Reply(tool_calls=[Call("notebook_read", {"path": name})]),
                         Reply(tool_calls=[Call("notebook_edit", {"path": name, "cell_id": ids[1],
                                                                  "source": "x = 8  # from the panel"})]),
                         Reply(text="Edited."))
    box = page.locator(".jp-nbagent-input textarea")
    box.fill("comment this cell")
    box.press("Enter")
    card = page.locator(".jp-nbagent-approval")
    card.wait_for()
    card.locator("button", has_text="Approve").click()
    wait_sources(page, ["# Title", "x = 8  # from the panel", "y = x * 10", "print(x + 1)  # mine"])
    page.locator(".jp-nbagent-assistant", has_text="Edited.").wait_for()
    first_request = json.dumps(model_server.model_requests()[-3].body)
    assert f"active notebook: {name}" in first_request and f"active cell: {ids[1]}" in first_request
    no_dialog(page, shot, mode)
    chip.locator("button").click()
    chip.wait_for(state="detached")

    # From a %agent cell: the kernel's agent reaches the server through the inherited runtime file.
    model_server.enqueue(Reply(tool_calls=[Call("notebook_read", {"path": name})]),
                         Reply(tool_calls=[Call("notebook_insert", {"path": name, "cell_type": "markdown",
                                                                    "source": "Hello from %agent"})]),
                         Reply(text="Inserted."))
    agent_cell = ("%load_ext nbagent\n%agent --approval auto --wait add a greeting at the top", ids[0])
    nbt.notebook_insert(ctx, name, "code", agent_cell[0], after_cell_id=ids[2])
    last = page.locator(".jp-Notebook .jp-Cell").last
    last.locator(".cm-content", has_text="%load_ext nbagent").wait_for()  # the insert is rendered
    before, before_ids = model_sources(page), model_ids(page)
    last.locator(".cm-content").click()
    page.keyboard.press("Control+Enter")  # run in place: no new cell below (it would be the user's change)
    try:
        page.wait_for_function(f"() => {MODEL}.cells[0].source === 'Hello from %agent'", timeout=30_000)
    except Exception:
        shot(f"live-notebook-{mode}-agent-cell")
        raise AssertionError(f"the %agent cell did not insert: {last.inner_text()[-1500:]!r}") from None
    no_dialog(page, shot, mode)
    undo_from_the_agent_view(page, lab, shot, mode, name, before, before_ids)
    if mode == "no-rtc":  # with collaboration, tests/jupyter/server/test_live_undo.py covers both
        undo_of_the_deleted_open_notebook(page, lab, shot, mode, name)
        undo_keeps_what_the_user_ran_unsaved(page, lab, shot, mode, name)


def model_ids(page) -> list[str]:
    return page.evaluate(f"() => {MODEL}.cells.map(c => c.id)")


def undo_from_the_agent_view(page, lab, shot, mode: str, name: str, before: list[str], before_ids: list[str]) -> None:
    """The Undo button of the %agent cell's view takes the greeting out of the open notebook at once
    (the cells keep their ids, no dialog), and Redo puts it back."""
    cell = page.locator(".jp-Notebook .jp-Cell").last
    bar = cell.locator(".nbagent-checkpoint")
    try:
        bar.wait_for(timeout=30_000)
    except Exception:
        shot(f"live-notebook-{mode}-no-checkpoint")
        raise AssertionError(f"the %agent view shows no checkpoint: {cell.inner_text()[-1500:]!r}") from None
    assert name in bar.inner_text()  # the files-changed line names the notebook
    greeted = model_ids(page)
    bar.locator("button", has_text="Undo").click()
    try:
        wait_sources(page, before)
    except Exception:
        shot(f"live-notebook-{mode}-undo")
        raise AssertionError(f"undo did not restore the open notebook: {bar.inner_text()!r}") from None
    assert model_ids(page) == before_ids
    bar.locator(".widget-html", has_text="undone").wait_for()
    no_dialog(page, shot, mode)
    shot(f"live-notebook-{mode}-undone")
    bar.locator("button", has_text="Redo").click()
    page.wait_for_function(f"() => {MODEL}.cells[0].source === 'Hello from %agent'")
    assert model_ids(page) == greeted
    wait_disk(lab.root / name, model_sources(page))  # saved, by the room or by the tab
    no_dialog(page, shot, mode)


def undo_of_the_deleted_open_notebook(page, lab, shot, mode: str, name: str) -> None:
    """A turn deletes the notebook open in the tab; undo writes it back exactly as the tab last saved
    it, so the tab keeps what the user typed meanwhile and its next save meets no "File Changed"."""
    store = agent_context(lab).extras["notebook_stores"][0]
    nbdoc.register_store(store)  # this process's agents reach the server as a kernel's agent does
    agent = Agent(model=ScriptedModel([Reply(tool_calls=[Call("bash", {"command": f"rm {name}"})]), "Gone."]),
                  workspace=lab.root, approval="auto")
    path = lab.root / name
    try:
        saved, shown = path.read_bytes(), model_sources(page)
        page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".cm-content").click()
        page.keyboard.press("End")
        page.keyboard.type("  # unsaved")  # typed, not saved, while the turn runs
        agent.run("delete the notebook")
        assert not path.exists()
        assert agent.undo().files == [name] and path.read_bytes() == saved
        assert model_sources(page)[2] == shown[2] + "  # unsaved"
        page.keyboard.press("Control+s")
        wait_disk(path, [*shown[:2], shown[2] + "  # unsaved", *shown[3:]])
        no_dialog(page, shot, mode)
    finally:
        agent.close()
        nbdoc.unregister_store(store)


def undo_keeps_what_the_user_ran_unsaved(page, lab, shot, mode: str, name: str) -> None:
    """A cell the user ran but did not save before a turn keeps its output when the turn is undone: the
    tab is saved before the turn's checkpoint, so the run is the user's, not the turn's."""
    ctx = agent_context(lab)
    store = ctx.extras["notebook_stores"][0]
    nbt.notebook_read(ctx, name)
    nbt.notebook_insert(ctx, name, "code", "import time; print('run', time.time_ns())")
    page.wait_for_function(f"() => {MODEL}.cells[0].source.startsWith('import time')")
    page.locator(".jp-Notebook .jp-Cell").first.locator(".cm-content").click()
    page.keyboard.press("Control+Enter")  # run in place; the tab is not saved
    page.wait_for_selector(".jp-Notebook .jp-Cell:first-child .jp-OutputArea-output:has-text('run ')")
    ran = page.evaluate(f"() => {MODEL}.cells[0].toJSON()")
    assert ran["execution_count"] and "run " in json.dumps(ran["outputs"])
    title = model_ids(page)[model_sources(page).index("# Title")]
    nbdoc.register_store(store)
    agent = Agent(model=ScriptedModel([Reply(tool_calls=[Call("notebook_read", {"path": name})]),
                                       Reply(tool_calls=[Call("notebook_edit", {"path": name, "cell_id": title,
                                                                                "source": "# Renamed"})]),
                                       "Renamed."]), workspace=lab.root, approval="auto")
    try:
        agent.run("rename the title")
        wait_sources(page, [s if s != "# Title" else "# Renamed" for s in model_sources(page)])
        assert agent.undo().files == [name]
        page.wait_for_function(f"() => {MODEL}.cells.some(c => c.source === '# Title')")
        kept = page.evaluate(f"() => {MODEL}.cells[0].toJSON()")
        assert (kept["outputs"], kept["execution_count"]) == (ran["outputs"], ran["execution_count"]), \
            "undo took back the output of a cell the user ran before the turn"
        on_disk = nbformat.read(lab.root / name, as_version=4).cells[0]
        assert on_disk.execution_count == ran["execution_count"] and "run " in json.dumps(on_disk.outputs)
        no_dialog(page, shot, mode)
    finally:
        agent.close()
        nbdoc.unregister_store(store)
