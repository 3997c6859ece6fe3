"""%agent in a real notebook: JupyterLab in headless Chromium, the kernel's agent on the scripted HTTP
server. Checks the rendered live view (answer, tool rows, todo progress, the approval card), clicks
Approve in the page while the turn waits in the background, and saves screenshots under
test-artifacts/browser/kernel-*.png."""

from __future__ import annotations

import nbformat
import pytest

from nbagent.testing import Call, Reply, Slow

pytestmark = [pytest.mark.browser, pytest.mark.integration]

TURN = ".jp-OutputArea-output .nbagent-turn"
TODOS = [{"content": "Read the notes", "status": "completed"},
         {"content": "Make the colour blue", "status": "in_progress"},
         {"content": "Report back", "status": "blocked", "note": "waits for the edit"}]


def write_notebook(path, sources):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def run_cell(page, index: int) -> None:
    page.locator(".jp-NotebookPanel .jp-Cell .cm-content").nth(index).click()
    page.keyboard.press("Shift+Enter")


def open_notebook(page, lab, name: str) -> None:
    page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}")
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=60_000)
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    if accept.count():
        accept.first.click()
    page.locator(".jp-StatusBar-Widget", has_text="Idle").first.wait_for(timeout=60_000)


def test_agent_magic_renders_the_live_view_and_the_card_approves(page, lab, model_server, shot, axe):
    (lab.root / "notes.txt").write_text("colour = red\n")
    write_notebook(lab.root / "agent.ipynb", ["%load_ext nbagent", "%agent Make the colour in notes.txt blue"])
    model_server.enqueue(
        Slow(0.03, Reply(reasoning="Read the file, then edit it.", text="Let me **plan** this first.",
                         tool_calls=[Call("todo_write", {"todos": TODOS})])),
        Reply(text="Reading the notes.", tool_calls=[Call("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[Call("edit_file", {"path": "notes.txt", "old_string": "red", "new_string": "blue"})]),
        Slow(0.03, Reply(text="## Done\n\nThe colour is now **blue** in `notes.txt`.")),
    )
    open_notebook(page, lab, "agent.ipynb")
    run_cell(page, 0)
    run_cell(page, 1)

    turn = page.locator(TURN)
    card = turn.locator(".nbagent-approval")
    card.wait_for(timeout=30_000)  # the turn waits for it, in the background
    page.locator(".jp-StatusBar-Widget", has_text="Idle").first.wait_for()  # the cell has returned
    assert turn.locator(".nbagent-answer strong", has_text="plan").count() == 1  # Markdown rendered
    rows = turn.locator(".nbagent-tool-row")
    assert rows.filter(has_text="read_file").filter(has_text="done").count() == 1
    assert rows.filter(has_text="edit_file").filter(has_text="waiting").count() == 1
    todos = turn.locator(".nbagent-todos")
    assert "1 of 3 done, 1 blocked" in todos.inner_text()
    assert todos.locator(".progress-bar").count() == 1
    assert "Approve edit_file?" in card.inner_text()
    assert card.locator("span", has_text="+colour = blue").count() == 1  # the diff, coloured
    shot("kernel-01-approval-card")
    axe(TURN, "the %agent view with an approval card")

    card.locator("button", has_text="Approve").click()
    turn.locator(".nbagent-answer h2", has_text="Done").wait_for(timeout=30_000)
    turn.locator(".nbagent-controls").wait_for(state="hidden")
    assert rows.filter(has_text="edit_file").filter(has_text="done").count() == 1
    assert turn.locator(".nbagent-approval").count() == 0
    assert "thought for" in turn.locator(".nbagent-reasoning").inner_text()
    assert "done" in turn.locator(".nbagent-header").inner_text()
    assert (lab.root / "notes.txt").read_text() == "colour = blue\n"
    rows.filter(has_text="edit_file").locator("summary").click()  # expand its diff and result
    rows.filter(has_text="edit_file").locator("details[open] span", has_text="+colour = blue").wait_for()
    turn.locator(".nbagent-reasoning").scroll_into_view_if_needed()
    shot("kernel-02-turn-done")
    axe(TURN, "the %agent view, its turn done")


def test_wait_keeps_the_cell_busy_and_the_card_still_answers(page, lab, model_server, shot):
    """--wait blocks the cell; the approval card's buttons work anyway (a blocking widget poll)."""
    (lab.root / "notes.txt").write_text("colour = blue\n")
    if not page.locator(".jp-NotebookPanel").is_visible():  # run alone: a notebook with nbagent loaded
        write_notebook(lab.root / "wait.ipynb", ["%load_ext nbagent", ""])
        open_notebook(page, lab, "wait.ipynb")
        run_cell(page, 0)
    model_server.enqueue(
        Reply(tool_calls=[Call("edit_file", {"path": "notes.txt", "old_string": "blue", "new_string": "green"})]),
        Reply(text="Now it is **green**."),
    )
    last = page.locator(".jp-NotebookPanel .jp-Cell").count() - 1  # the empty cell Shift+Enter left
    page.locator(".jp-NotebookPanel .jp-Cell .cm-content").nth(last).click()
    page.keyboard.type("%agent --wait Make it green")
    page.keyboard.press("Shift+Enter")
    turn = page.locator(TURN).last
    card = turn.locator(".nbagent-approval")
    card.wait_for(timeout=30_000)
    assert page.locator(".jp-Cell").nth(last).locator(".jp-InputPrompt").inner_text().strip() == "[*]:"
    shot("kernel-03-wait-approval")
    card.locator("button", has_text="Approve").click()
    turn.locator(".nbagent-answer strong", has_text="green").wait_for(timeout=30_000)
    page.locator(".jp-StatusBar-Widget", has_text="Idle").first.wait_for(timeout=30_000)
    assert (lab.root / "notes.txt").read_text() == "colour = green\n"
