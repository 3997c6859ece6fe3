"""Reviewing a turn in the open notebook, with the keyboard alone, run with collaboration on and off
(test_review_rtc.py, test_review_no_rtc.py).

A turn from the panel (the scripted model) edits three cells; the user keeps the first, undoes the
second and undoes one hunk of the third, all from the review's blocks in the cells; the file and the
open view hold exactly that; Redo puts back what was undone; axe-core finds nothing in the review.
Then a turn of an agent that is not the panel's (as %agent in a kernel: it reaches the server through
the runtime file) shows its change in the open notebook too, and "Keep all" closes the review. Last, a
text file the panel's turn changed: its diff view beside it, one hunk undone by keyboard. Between the two,
review before writing: the panel's turn suggests two edits, one is applied and one rejected.
"""

from __future__ import annotations

import os
import shutil
import time

import nbformat

from nbagent import Agent
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel
from nbagent.tools import nbdoc
from tests.paths import CHECKOUT

from .live_flow import MODEL, agent_context, disk_sources, no_dialog, open_notebook, wait_disk, wait_sources

DOC_IMAGES = CHECKOUT / "docs" / "images"
BLOCK = ".jp-Notebook .jp-nbagent-review-block"
BAR = ".jp-nbagent-review-bar"
BEFORE = ["# Title", "x = 1", "y = 1", "p = 1\nq = 2\nr = 3"]
AFTER = ["# Title", "x = 2", "y = 2", "p = 10\nq = 2\nr = 30"]


def doc_shot(page, shot, name: str) -> None:
    """A screenshot for the test's artifacts; with NBAGENT_DOC_IMAGES=1 the collaboration run's also into
    docs/images/ (docs/notebooks.md shows them)."""
    path = shot(name)
    if os.environ.get("NBAGENT_DOC_IMAGES") == "1" and name.startswith("review-rtc-"):
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOC_IMAGES / f"{name}.png")


def focused(page) -> str:
    """What has the keyboard's focus: its aria-label, or its text."""
    return page.evaluate("() => document.activeElement?.getAttribute('aria-label') || "
                         "document.activeElement?.textContent || ''")


def press(page, key: str, times: int = 1) -> None:
    for _ in range(times):
        page.keyboard.press(key)


def wait_blocks(page, n: int) -> None:
    page.wait_for_function(f"(n) => document.querySelectorAll('{BLOCK}').length === n", arg=n, timeout=20_000)


def wait_both(page, lab, name: str, sources: list[str]) -> None:
    """The open view and the file hold ``sources``."""
    wait_sources(page, sources)
    wait_disk(lab.root / name, sources)


def keep_waiting(page) -> None:
    """jupyter-collaboration asks "The document is taking some time to load" when its provider syncs slowly
    (a loaded machine): the answer is to wait, as a user would."""
    dialog = page.locator(".jp-Dialog", has_text="taking some time to load")
    if dialog.count():
        dialog.locator(".jp-mod-accept").click()
        dialog.wait_for(state="detached")


def panel_turn(page, model_server, name: str, ids: list[str]) -> None:
    """From the panel, by keyboard: a turn that edits cells 2, 3 and 4 (two hunks in the last)."""
    keep_waiting(page)
    model_server.enqueue(
        Reply(tool_calls=[Call("notebook_read", {"path": name})]),
        Reply(tool_calls=[Call("notebook_edit", {"path": name, "cell_id": ids[1], "source": AFTER[1]}),
                          Call("notebook_edit", {"path": name, "cell_id": ids[2], "source": AFTER[2]}),
                          Call("notebook_edit", {"path": name, "cell_id": ids[3], "source": AFTER[3]})]),
        Reply(text="Edited three cells."),
    )
    if not page.locator(".jp-nbagent-input textarea").is_visible():
        page.locator("li[data-id='nbagent-panel']").click()
    box = page.locator(".jp-nbagent-input textarea")
    box.focus()
    page.keyboard.type("Change x, y, p and r")
    page.keyboard.press("Enter")
    page.locator(".jp-nbagent-assistant", has_text="Edited three cells.").wait_for()


def run_review_flow(page, lab, shot, axe, mode: str, model_server) -> None:
    name = f"review-{mode}.ipynb"
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell(BEFORE[0])] + [nbformat.v4.new_code_cell(s) for s in BEFORE[1:]]
    nbformat.write(nb, lab.root / name)
    ids = [c.id for c in nb.cells]
    open_notebook(page, lab, name)

    panel_turn(page, model_server, name, ids)
    wait_both(page, lab, name, AFTER)
    wait_blocks(page, 3)
    page.locator(BAR, has_text="4 changes to review").wait_for()
    hunks = page.locator(f"{BLOCK} .jp-nbagent-review-hunk")
    assert hunks.count() == 4
    third = page.locator(".jp-Notebook .jp-Cell").nth(3).locator(".jp-nbagent-review-block")
    assert third.locator(".jp-mod-removed").all_inner_texts() == ["- p = 1", "- r = 3"]
    assert third.locator(".jp-mod-added").all_inner_texts() == ["+ p = 10", "+ r = 30"]
    axe(BLOCK, f"[{mode}] the review's blocks in the cells")
    axe(BAR, f"[{mode}] the review's bar")
    doc_shot(page, shot, f"review-{mode}-pending")

    # Alt N from the panel's prompt box: the first change (cell 2's) has the focus.
    press(page, "Alt+n")
    page.wait_for_function("() => document.activeElement?.classList.contains('jp-nbagent-review-hunk')")
    assert focused(page).startswith("hunk 1, line 1 of cell 2"), focused(page)
    # Keep cell 2 with its button: Shift+Tab twice reaches "Keep cell" (then "Undo cell", then the hunk).
    press(page, "Shift+Tab", 2)
    assert focused(page) == "Keep every change to cell 2, turn 1", focused(page)
    press(page, "Enter")
    wait_blocks(page, 2)
    # The focus moved on to the next change, cell 3's: Alt U undoes it.
    page.wait_for_function("() => (document.activeElement?.getAttribute('aria-label') || '').includes('cell 3')")
    press(page, "Alt+u")
    wait_both(page, lab, name, ["# Title", "x = 2", "y = 1", AFTER[3]])
    wait_blocks(page, 1)
    # Cell 4: the second hunk (r = 30) is undone, the first stays.
    page.wait_for_function("() => (document.activeElement?.getAttribute('aria-label') || '').includes('cell 4')")
    press(page, "Alt+n")
    assert focused(page).startswith("hunk 2, line 3 of cell 4"), focused(page)
    press(page, "Alt+u")
    partial = ["# Title", "x = 2", "y = 1", "p = 10\nq = 2\nr = 3"]
    wait_both(page, lab, name, partial)
    page.locator(BAR, has_text="1 change to review").wait_for()
    assert page.locator(f"{BLOCK} .jp-nbagent-review-hunk").count() == 1
    no_dialog(page, shot, mode)
    axe(BAR, f"[{mode}] the bar after two undos")
    doc_shot(page, shot, f"review-{mode}-partial")

    # Redo (Alt R) puts back the last undo (the hunk), then the one before (cell 3).
    press(page, "Alt+r")
    wait_both(page, lab, name, ["# Title", "x = 2", "y = 1", AFTER[3]])
    press(page, "Alt+r")
    wait_both(page, lab, name, AFTER)
    wait_blocks(page, 2)
    no_dialog(page, shot, mode)

    other_agent_turn(page, lab, shot, name, ids)

    # Keep all, by keyboard from the bar: the review closes, nothing of the turns is pending.
    page.locator(f"{BAR} button", has_text="Keep all").focus()
    press(page, "Enter")
    page.locator(BAR).wait_for(state="hidden")
    wait_blocks(page, 0)
    assert page.evaluate(f"() => {MODEL}.cells.map(c => c.source)") == [*AFTER[:3], "p = 10\nq = 2\nr = 30  # agent"]
    assert disk_sources(lab.root / name) == [*AFTER[:3], "p = 10\nq = 2\nr = 30  # agent"]
    no_dialog(page, shot, mode)

    suggestion_turn(page, lab, shot, axe, mode, model_server, name, ids)


def suggestion_turn(page, lab, shot, axe, mode: str, model_server, name: str, ids: list[str]) -> None:
    """Review before writing (the panel's checkbox, by keyboard): the turn's edits are suggestions; Apply
    (Alt K) writes one into the file and the view, Reject (Alt U) leaves the other cell as it was."""
    toggle = page.locator(".jp-nbagent-review-first")
    toggle.focus()
    press(page, "Space")
    page.wait_for_function("() => document.querySelector('.jp-nbagent-review-first').checked")
    now = page.evaluate(f"() => {MODEL}.cells.map(c => c.source)")
    model_server.enqueue(
        Reply(tool_calls=[Call("notebook_read", {"path": name})]),
        Reply(tool_calls=[Call("notebook_edit", {"path": name, "cell_id": ids[1], "source": "x = 3"}),
                          Call("notebook_edit", {"path": name, "cell_id": ids[2], "source": "y = 3"})]),
        Reply(text="Suggested two edits."),
    )
    page.locator(".jp-nbagent-input textarea").focus()
    page.keyboard.type("Suggest x = 3 and y = 3")
    page.keyboard.press("Enter")
    page.locator(".jp-nbagent-assistant", has_text="Suggested two edits.").wait_for()
    wait_blocks(page, 2)
    page.locator(BAR, has_text="2 suggested changes to review").wait_for()
    assert page.locator(f"{BLOCK} button", has_text="Apply cell").count() == 2
    assert page.evaluate(f"() => {MODEL}.cells.map(c => c.source)") == now, "a suggestion was written"
    assert disk_sources(lab.root / name) == now
    axe(BLOCK, f"[{mode}] suggested changes")
    doc_shot(page, shot, f"review-{mode}-suggested")
    press(page, "Alt+n")
    assert "of cell 2, turn 2, suggested" in focused(page), focused(page)
    press(page, "Alt+k")
    applied = [now[0], "x = 3", *now[2:]]
    wait_both(page, lab, name, applied)
    wait_blocks(page, 1)
    page.wait_for_function("() => (document.activeElement?.getAttribute('aria-label') || '').includes('cell 3')")
    press(page, "Alt+u")
    wait_blocks(page, 0)
    page.locator(BAR).wait_for(state="hidden")
    assert page.evaluate(f"() => {MODEL}.cells.map(c => c.source)") == applied
    assert disk_sources(lab.root / name) == applied
    toggle.focus()
    press(page, "Space")
    page.wait_for_function("() => !document.querySelector('.jp-nbagent-review-first').checked")


def other_agent_turn(page, lab, shot, name: str, ids: list[str]) -> None:
    """A turn of an agent outside the panel (as %agent in a kernel) shows in the open notebook too."""
    store = agent_context(lab).extras["notebook_stores"][0]
    nbdoc.register_store(store)
    agent = Agent(model=ScriptedModel([
        Reply(tool_calls=[Call("notebook_read", {"path": name})]),
        Reply(tool_calls=[Call("notebook_edit", {"path": name, "cell_id": ids[3],
                                                 "source": "p = 10\nq = 2\nr = 30  # agent"})]),
        "Commented."]), workspace=lab.root, approval="auto")
    try:
        agent.run("comment r")
        deadline = time.monotonic() + 20
        while page.locator(BLOCK).count() != 3:
            if time.monotonic() > deadline:
                shot("review-other-agent")
                raise AssertionError(f"the other agent's turn did not show in the open notebook: "
                                     f"{page.locator(BAR).inner_text()!r}")
            time.sleep(0.1)
        assert page.locator(BAR, has_text="from 2 turns").count() == 1
    finally:
        agent.close()
        nbdoc.unregister_store(store)


def run_file_review(page, lab, shot, axe, mode: str, model_server) -> None:
    """A text file changed in two hunks: "Show diff" opens the review beside it; one hunk is undone."""
    name = f"notes-{mode}.py"
    (lab.root / name).write_text("a = 1\nb = 2\nc = 3\n")
    model_server.enqueue(
        Reply(tool_calls=[Call("read_file", {"path": name})]),
        Reply(tool_calls=[Call("write_file", {"path": name, "content": "a = 10\nb = 2\nc = 30\n"})]),
        Reply(text="Edited the notes."),
    )
    box = page.locator(".jp-nbagent-input textarea")
    box.focus()
    page.keyboard.type(f"Change a and c in {name}")
    page.keyboard.press("Enter")
    page.locator(".jp-nbagent-assistant", has_text="Edited the notes.").wait_for()
    page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", name)
    bar = page.locator(f"{BAR}:visible", has_text="2 changes to review")
    bar.wait_for()
    bar.locator("button", has_text="Show diff").focus()
    press(page, "Enter")
    view = page.locator(".jp-nbagent-review-diffview")
    view.wait_for()
    page.wait_for_function("() => document.activeElement?.classList.contains('jp-nbagent-review-hunk')")
    assert focused(page).startswith(f"hunk 1, line 1 of {name}"), focused(page)
    axe(".jp-nbagent-review-diffview", f"[{mode}] the diff view of a text file")
    doc_shot(page, shot, f"review-{mode}-file")
    press(page, "Alt+n")
    press(page, "Alt+u")
    deadline = time.monotonic() + 15
    while (lab.root / name).read_text() != "a = 10\nb = 2\nc = 3\n":
        assert time.monotonic() < deadline, (lab.root / name).read_text()
        time.sleep(0.1)
    page.locator(f"{BAR}:visible", has_text="1 change to review").wait_for()
    assert view.locator(".jp-nbagent-review-hunk").count() == 1
    wait_editor(page, "c = 3")  # the open editor shows the file as it is now, with or without collaboration
    press(page, "Alt+r")
    deadline = time.monotonic() + 15
    while (lab.root / name).read_text() != "a = 10\nb = 2\nc = 30\n":
        assert time.monotonic() < deadline, (lab.root / name).read_text()
        time.sleep(0.1)
    page.locator(f"{BAR}:visible", has_text="2 changes to review").wait_for()
    wait_editor(page, "c = 30")


def wait_editor(page, last_line: str) -> None:
    """The text file's editor (CodeMirror: its lines' text joined) ends with ``last_line``."""
    page.wait_for_function("(last) => [...document.querySelectorAll('.jp-FileEditor .cm-content')]"
                           ".some(e => e.textContent.endsWith(last))", arg=last_line, timeout=15_000)
