"""The side panel in a real JupyterLab: a prompt to the scripted model, its stream, tools, todos,
an approved edit landing on disk, the @ picker and the dark theme. The tests share one page, in order,
and each also passes alone: it opens the panel and makes the turns it needs itself."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from nbagent.testing import Call, Reply, Slow

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PANEL = ".jp-nbagent"
TODOS = [{"content": "Read the notes", "status": "completed"},
         {"content": "Make the colour blue", "status": "in_progress"},
         {"content": "Report back", "status": "pending"}]


def run_command(page, label: str) -> None:
    """Run a command from JupyterLab's command palette by its label."""
    search = page.locator(".jp-ModalCommandPalette .lm-CommandPalette-input")
    for _ in range(3):  # the View menu can swallow a click while the shell is still settling
        # Through the View menu: headless Chromium keeps Ctrl+Shift+C (its own inspect shortcut).
        page.locator(".lm-MenuBar-itemLabel", has_text="View").click()
        page.locator(".lm-Menu-itemLabel", has_text="Command Palette").click()
        try:
            search.wait_for(state="visible", timeout=3_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    search.fill(label)
    page.locator(".jp-ModalCommandPalette .lm-CommandPalette-item.lm-mod-active", has_text=label).wait_for()
    page.keyboard.press("Enter")
    search.wait_for(state="hidden")


@pytest.fixture
def panel(page):
    """The page with the panel shown (a test run alone finds it closed)."""
    if not page.locator(PANEL).is_visible():
        run_command(page, "nbagent: Open the Agent Panel")
        page.locator(f"{PANEL} .jp-nbagent-input textarea").wait_for(state="visible")
    return page


def edit_turn(page, lab, model_server, name: str) -> None:
    """A turn that changes ``name`` from red to blue, approved in its card, finished."""
    (lab.root / name).write_text("colour = red\n")
    model_server.enqueue(
        Reply(tool_calls=[Call("edit_file", {"path": name, "old_string": "red", "new_string": "blue"})]),
        Reply(text=f"Changed {name}."),
    )
    box = page.locator(f"{PANEL} .jp-nbagent-input textarea")
    box.fill(f"Make the colour in {name} blue")
    box.press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-approval button", has_text="Approve").click()
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text=f"Changed {name}.").wait_for()
    page.locator(f"{PANEL} .jp-nbagent-status").wait_for(state="detached")


def test_open_the_panel_from_the_palette(page, shot):
    run_command(page, "nbagent: Open the Agent Panel")
    page.locator(PANEL).wait_for(state="visible")
    page.locator(f"{PANEL} .jp-nbagent-sessions").wait_for()
    page.wait_for_function("document.activeElement && document.activeElement.tagName === 'TEXTAREA'")
    shot("01-panel-open")


def test_prompt_streams_an_answer_with_tools_todos_and_an_approval(panel, page, lab, model_server, shot):
    (lab.root / "notes.txt").write_text("colour = red\n")
    model_server.enqueue(
        Slow(0.05, Reply(reasoning="The user wants a colour change. Read the file, then edit it.",
                   text="Let me **plan** this first.",
                   tool_calls=[Call("todo_write", {"todos": TODOS})])),
        Reply(text="Reading the notes.", tool_calls=[Call("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[Call("edit_file", {"path": "notes.txt", "old_string": "red", "new_string": "blue"})]),
        Slow(0.05, Reply(text="## Done\n\nThe colour is now **blue** in `notes.txt`.")),
    )
    box = page.locator(f"{PANEL} .jp-nbagent-input textarea")
    box.fill("Make the colour in notes.txt blue")
    box.press("Enter")

    page.locator(f"{PANEL} .jp-nbagent-user", has_text="Make the colour in notes.txt blue").wait_for()
    page.locator(f"{PANEL} .jp-nbagent-assistant strong", has_text="plan").wait_for()  # Markdown rendered
    shot("02-streaming")
    card = page.locator(f"{PANEL} .jp-nbagent-approval")
    card.wait_for()
    assert "edit_file" in card.inner_text()
    assert card.locator(".jp-nbagent-diff-del", has_text="colour = red").count() == 1
    assert card.locator(".jp-nbagent-diff-add", has_text="colour = blue").count() == 1
    todo_rows = page.locator(f"{PANEL} .jp-nbagent-todo")
    assert todo_rows.count() == 3
    assert "1/3" in page.locator(f"{PANEL} .jp-nbagent-todos summary").inner_text()
    assert page.locator(f"{PANEL} .jp-nbagent-tool.jp-mod-done[data-call-id]").count() == 2  # todo_write, read_file
    assert page.locator(f"{PANEL} .jp-nbagent-reasoning:not([open])").count() == 1, "reasoning starts collapsed"
    assert page.locator(f"{PANEL} .jp-nbagent-inflight", has_text="edit_file").count() == 1
    assert (lab.root / "notes.txt").read_text() == "colour = red\n"
    shot("03-approval-card")

    card.locator("button", has_text="Approve").click()
    page.locator(f"{PANEL} .jp-nbagent-assistant h2", has_text="Done").wait_for()
    page.locator(f"{PANEL} .jp-nbagent-inflight").wait_for(state="detached")
    deadline = time.monotonic() + 5
    while (lab.root / "notes.txt").read_text() != "colour = blue\n" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (lab.root / "notes.txt").read_text() == "colour = blue\n"
    assert page.locator(f"{PANEL} .jp-nbagent-approval").count() == 0
    counters = page.locator(f"{PANEL} .jp-nbagent-counters").inner_text()
    assert "0 in" not in counters, counters
    shot("04-after-approval")

    page.locator(f"{PANEL} .jp-nbagent-reasoning summary").click()
    page.locator(f"{PANEL} .jp-nbagent-tool", has_text="edit_file").locator("summary").click()
    page.locator(f"{PANEL} .jp-nbagent-tool[open] .jp-nbagent-diff-add").first.wait_for()
    shot("05-expanded-tool-and-reasoning")
    model_server.assert_complete()


def test_undo_and_redo_from_the_panel(panel, page, lab, model_server, shot):
    edit_turn(page, lab, model_server, "undo.txt")
    notes = lab.root / "undo.txt"
    bar = page.locator(f"{PANEL} .jp-nbagent-checkpoint").last
    bar.wait_for()
    assert "1 file changed: undo.txt" in bar.inner_text()
    bar.locator(".jp-nbagent-undo").click()
    bar.locator(".jp-nbagent-redo").wait_for()  # the server's checkpoint event reached the panel
    assert notes.read_text() == "colour = red\n"
    assert "undone" in bar.inner_text()
    shot("05b-undone")
    bar.locator(".jp-nbagent-redo").click()
    bar.locator(".jp-nbagent-undo").wait_for()
    assert notes.read_text() == "colour = blue\n"


def test_at_opens_a_keyboard_picker_that_inserts_the_path(panel, page, lab, shot):
    for name in ("src/analysis.py", "src/plots.py", "data/raw.csv"):
        (lab.root / name).parent.mkdir(parents=True, exist_ok=True)
        (lab.root / name).write_text("x = 1\n")
    box = page.locator(f"{PANEL} .jp-nbagent-input textarea")
    box.click()
    box.press_sequentially("compare @src/")
    # The list of the whole query, not one of an earlier keystroke's ("@s" lists notes.txt too) still shown
    picker = page.locator(f"{PANEL} .jp-nbagent-picker[data-query='src/']")
    picker.locator("li", has_text="src/plots.py").wait_for()
    listed = picker.locator("li").all_inner_texts()
    assert sorted(listed[:2]) == ["src/analysis.py", "src/plots.py"], "files under src/ come first"
    assert "data/raw.csv" not in listed
    box.press("ArrowDown")
    assert picker.locator("li.jp-mod-selected").inner_text() == listed[1]
    shot("06-at-picker")
    box.press("Enter")
    picker.wait_for(state="detached")
    assert box.input_value() == f"compare @{listed[1]} "
    box.press("Escape")  # nothing runs: Escape aborts an idle turn harmlessly
    box.fill("")


def test_history_walks_with_up_and_down(panel, page, model_server):
    model_server.enqueue(Reply(text="Noted."))
    box = page.locator(f"{PANEL} .jp-nbagent-input textarea")
    box.fill("Remember this prompt")
    box.press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="Noted.").wait_for()
    box.fill("a draft")
    box.press("ArrowUp")
    assert box.input_value() == "Remember this prompt"
    box.press("ArrowDown")
    assert box.input_value() == "a draft"
    box.fill("")


def test_dark_theme(panel, page, shot):
    run_command(page, "Use Theme: JupyterLab Dark")
    page.wait_for_function("document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    dark = """() => {  // the theme's stylesheet has reached the panel: its background is dark
        const el = document.querySelector('.jp-nbagent');
        const rgb = el && getComputedStyle(el).backgroundColor.match(/\\d+/g);
        return rgb && rgb.slice(0, 3).reduce((a, b) => a + Number(b), 0) < 300;
    }"""
    page.wait_for_function(dark, timeout=30_000)
    background = page.locator(f"{PANEL} .jp-nbagent-transcript").evaluate(
        "el => getComputedStyle(el.closest('.jp-nbagent')).backgroundColor")
    channels = [int(c) for c in background[background.index("(") + 1:-1].split(",")[:3]]
    assert sum(channels) < 3 * 100, f"the panel follows the dark theme ({background})"
    shot("07-dark-theme")
