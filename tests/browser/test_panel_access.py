"""The panel for everyone, in a real JupyterLab: one whole turn driven by the keyboard alone (the
shortcut that focuses the prompt, the approval card that takes focus, Tab to Approve and Deny,
Escape that ends a turn, the session and @ pickers), axe-core over the panel in each of its states,
the polite announcement of the answer, and the session's own model and approval controls."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from nbagent.testing import Call, Reply, Slow

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PANEL = ".jp-nbagent"
BOX = f"{PANEL} .jp-nbagent-input textarea"


def focused(page) -> str:
    """The focused element, as its tag, class and text (for assertions and their messages)."""
    return page.evaluate("""() => { const el = document.activeElement;
        return el ? `${el.tagName.toLowerCase()}.${el.className}: ${(el.innerText || '').slice(0, 40)}` : ''; }""")


def tab_to(page, text: str, *, back: bool = False, limit: int = 40) -> None:
    """Press Tab (Shift+Tab with ``back``) until the focused element's description contains ``text``."""
    for _ in range(limit):
        if text in focused(page):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"Tab never reached {text!r}; focus is on {focused(page)!r}")


def settings_api(lab) -> dict:
    with urllib.request.urlopen(f"{lab.url}/nbagent/api/settings?token={lab.token}", timeout=10) as answer:
        return json.loads(answer.read())


@pytest.fixture
def panel(page):
    """The page with the panel shown and the caret in its prompt box, by its default shortcut (Accel Shift A)."""
    page.keyboard.press("Control+Shift+A")
    page.locator(BOX).wait_for(state="visible")
    page.wait_for_function("document.activeElement && document.activeElement.matches('.jp-nbagent-input textarea')")
    if page.locator(f"{PANEL} .jp-nbagent-abort").is_enabled():  # a turn an earlier test left running
        page.keyboard.press("Escape")
        page.locator(f"{PANEL} .jp-nbagent-status").wait_for(state="detached")
    return page


def test_one_whole_turn_with_the_keyboard_alone(panel, page, lab, model_server, axe, shot):
    (lab.root / "notes.txt").write_text("colour = red\n")
    model_server.enqueue(
        Slow(0.04, Reply(text="First I read the file.\n\nThen I change the colour.",
                         tool_calls=[Call("edit_file", {"path": "notes.txt", "old_string": "red",
                                                        "new_string": "blue"})])),
        Reply(text="The colour is **blue** now."),
    )
    axe(PANEL, "idle")
    page.keyboard.type("Make the colour in notes.txt blue")
    page.keyboard.press("Enter")

    card = page.locator(f"{PANEL} .jp-nbagent-approval")
    card.wait_for()
    page.wait_for_function("document.activeElement && document.activeElement.matches('.jp-nbagent-approval')")
    live = page.locator(f"{PANEL} .jp-nbagent-announce")
    assert live.get_attribute("aria-live") == "polite"
    # Whole paragraphs only: the first, the second, or both when they ended within one repaint
    assert live.inner_text() in ("First I read the file.", "Then I change the colour.",
                                 "First I read the file. Then I change the colour."), live.inner_text()
    axe(PANEL, "an approval card")
    shot("access-01-card-focused")
    page.keyboard.press("Tab")
    tab_to(page, "Approve")
    page.keyboard.press("Tab")
    assert "Deny" in focused(page), focused(page)
    page.keyboard.press("Shift+Tab")
    assert "Approve" in focused(page), focused(page)
    page.keyboard.press("Enter")

    page.locator(f"{PANEL} .jp-nbagent-assistant strong", has_text="blue").wait_for()
    page.locator(f"{PANEL} .jp-nbagent-status").wait_for(state="detached")
    assert (lab.root / "notes.txt").read_text() == "colour = blue\n"
    assert page.evaluate("document.activeElement.matches('.jp-nbagent-input textarea')"), focused(page)
    assert live.inner_text() == "The colour is blue now.", "the last paragraph, once the answer ended"
    tool = page.locator(f"{PANEL} .jp-nbagent-tool", has_text="edit_file")
    assert tool.get_attribute("aria-label") == "Tool edit_file notes.txt: done"
    shot("access-02-turn-done")


def test_escape_ends_a_running_turn_from_anywhere_in_the_panel(panel, page, model_server, axe):
    model_server.enqueue(Slow(0.3, Reply(text=" ".join(["streaming"] * 60))))
    page.keyboard.type("Say a lot")
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="streaming").wait_for()
    axe(PANEL, "streaming")
    tab_to(page, "Chat", back=True)  # away from the prompt box: Escape is the panel's, not the box's
    page.keyboard.press("Escape")
    page.locator(f"{PANEL} .jp-nbagent-note", has_text="Turn aborted.").wait_for()
    page.locator(f"{PANEL} .jp-nbagent-status").wait_for(state="detached")


def test_the_session_and_at_pickers_work_without_a_mouse(panel, page, lab, model_server):
    for name in ("src/analysis.py", "src/plots.py"):
        (lab.root / name).parent.mkdir(parents=True, exist_ok=True)
        (lab.root / name).write_text("x = 1\n")
    page.locator(BOX).focus()
    page.keyboard.type("compare @src/pl")
    picker = page.locator(f"{PANEL} .jp-nbagent-picker[data-query='src/pl']")
    picker.locator("li[aria-selected='true']", has_text="src/plots.py").wait_for()
    box = page.locator(BOX)
    assert box.get_attribute("aria-activedescendant") == "jp-nbagent-pick-0"
    page.keyboard.press("Tab")  # Tab, like Enter, takes the selected file
    picker.wait_for(state="detached")
    assert box.input_value() == "compare @src/plots.py "
    box.fill("")

    model_server.enqueue(Reply(text="Here to come back to."))
    page.keyboard.type("A turn to come back to")
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="Here to come back to.").wait_for()
    before = page.locator(f"{PANEL} .jp-nbagent-sessions").input_value()
    tab_to(page, "New", back=True)
    page.keyboard.press("Enter")  # a new, empty session
    page.wait_for_function(f"document.querySelector('{PANEL} .jp-nbagent-sessions').value !== '{before}'")
    page.locator(f"{PANEL} .jp-nbagent-empty").wait_for()
    tab_to(page, "select.jp-nbagent-sessions", back=True)
    page.keyboard.press("ArrowDown")  # back to the session used last (the list is newest first)
    page.locator(f"{PANEL} .jp-nbagent-user", has_text="A turn to come back to").wait_for()
    assert page.locator(f"{PANEL} .jp-nbagent-sessions").input_value() == before


def test_the_model_and_approval_controls_apply_to_the_session_at_once(panel, page, lab, model_server, shot):
    approval = page.locator(f"{PANEL} .jp-nbagent-controls .jp-nbagent-approval-mode")
    assert approval.input_value() == "ask"
    assert page.locator(f"{PANEL} .jp-nbagent-model-picker").input_value() == "scripted-model"
    approval.select_option("auto")
    page.locator(f"{PANEL} .jp-nbagent-approval-mode[data-mode='auto']").wait_for()  # the server's settings_changed

    (lab.root / "auto.txt").write_text("colour = red\n")
    model_server.enqueue(
        Reply(tool_calls=[Call("edit_file", {"path": "auto.txt", "old_string": "red", "new_string": "blue"})]),
        Reply(text="Changed without asking."),
    )
    page.locator(BOX).fill("Make auto.txt blue")
    page.locator(BOX).press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="Changed without asking.").wait_for()
    assert (lab.root / "auto.txt").read_text() == "colour = blue\n"
    assert page.locator(f"{PANEL} .jp-nbagent-approval").count() == 0
    assert settings_api(lab)["approval"] in (None, "ask"), "a session's switch is not the user's default"

    page.locator(f"{PANEL} .jp-nbagent-tab[data-tab='settings']").click()
    model = page.locator(f"{PANEL} .jp-nbagent-setting-model")
    model.fill("other-model")
    model.press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-model-picker").filter(has=page.locator("option[value='other-model']")).wait_for()
    page.wait_for_function(f"document.querySelector('{PANEL} .jp-nbagent-model-picker').value === 'other-model'")
    assert settings_api(lab)["model"] is None
    shot("access-03-settings-tab")

    page.locator(f"{PANEL} .jp-nbagent-keep-defaults").click()
    page.locator(f"{PANEL} .jp-nbagent-settings-hint", has_text="Saved as your defaults").wait_for()
    deadline = time.monotonic() + 10
    while settings_api(lab)["model"] != "other-model" and time.monotonic() < deadline:
        time.sleep(0.1)
    saved = settings_api(lab)
    assert (saved["model"], saved["approval"]) == ("other-model", "auto")

    page.locator(f"{PANEL} .jp-nbagent-tab[data-tab='chat']").click()
    model_server.enqueue(Reply(text="Answered by the other model."))
    page.locator(BOX).fill("Which model?")
    page.locator(BOX).press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="Answered by the other model.").wait_for()
    assert model_server.requests[-1].body["model"] == "other-model"


def test_no_serious_violations_in_the_tabs_and_the_dark_theme(panel, page, axe, shot):
    for tab in ("memory", "settings", "chat"):
        page.locator(f"{PANEL} .jp-nbagent-tab[data-tab='{tab}']").click()
        page.locator(f"{PANEL} #jp-nbagent-tabpanel-{tab}").wait_for()
        axe(PANEL, f"the {tab} tab")
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").click()
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel").get_by_text("JupyterLab Dark", exact=True).click()
    page.wait_for_function("document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_function("""() => {
        const rgb = getComputedStyle(document.querySelector('.jp-nbagent')).backgroundColor.match(/\\d+/g);
        return rgb && rgb.slice(0, 3).reduce((a, b) => a + Number(b), 0) < 300; }""", timeout=30_000)
    for tab in ("settings", "memory", "chat"):
        page.locator(f"{PANEL} .jp-nbagent-tab[data-tab='{tab}']").click()
        page.locator(f"{PANEL} #jp-nbagent-tabpanel-{tab}").wait_for()
        axe(PANEL, f"the {tab} tab, dark theme")
    shot("access-04-dark")
