"""Issue 40 in the real panel (scripted model): the user's bubble shows the words typed, with what nbagent
added as a chip; a failed tool row says why on its line; the Settings tab shows the tool sets the agent
really has. The tests share one page, in order."""

from __future__ import annotations

import nbformat
import pytest

from nbagent.testing import Call, Reply

from .live_flow import open_notebook  # noqa: E402  (tests/browser is on sys.path)
from .test_lab_panel import PANEL, run_command  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]


@pytest.fixture(scope="module")
def lab_args():
    return ["--expose-app-in-browser"]  # window.jupyterapp, for open_notebook


def open_panel(page) -> None:
    if not page.locator(PANEL).is_visible():
        run_command(page, "nbagent: Open the Agent Panel")
    page.locator(f"{PANEL} .jp-nbagent-input textarea").wait_for(state="visible")


def ask(page, prompt: str) -> None:
    box = page.locator(f"{PANEL} .jp-nbagent-input textarea")
    box.fill(prompt)
    box.press("Enter")


def test_the_users_bubble_shows_the_words_typed_and_the_open_notebook_as_a_chip(page, lab, model_server, shot):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, lab.root / "quick.ipynb")
    open_notebook(page, lab, "quick.ipynb")
    page.locator(".jp-Notebook .jp-Cell .cm-content").first.click()  # an active cell, as a user has
    open_panel(page)
    model_server.enqueue(Reply(text="It sets x."))
    ask(page, "What does this cell do?")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="It sets x.").wait_for()
    bubble = page.locator(f"{PANEL} .jp-nbagent-user").last
    chip = bubble.locator(".jp-nbagent-added-context")
    assert "quick.ipynb" in chip.inner_text() and "cell" in chip.inner_text()
    assert bubble.inner_text().startswith("What does this cell do?")
    assert "open_in_jupyter" not in bubble.inner_text() and "active cell:" not in bubble.inner_text()
    sent = model_server.model_requests()[-1].body["messages"][-1]["content"]
    assert "<open_in_jupyter>" in sent and "quick.ipynb" in sent  # the model still gets it
    shot("first-hour-01-bubble-and-chip")


def test_a_failed_tool_row_says_why_without_opening_it(page, lab, model_server, shot):
    open_panel(page)
    model_server.enqueue(Reply(tool_calls=[Call("read_file", {"path": "no_such_file.csv"})]),
                         Reply(text="That file is missing."))
    ask(page, "Read no_such_file.csv")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="That file is missing.").wait_for()
    row = page.locator(f"{PANEL} .jp-nbagent-tool.jp-mod-failed").last
    reason = row.locator(".jp-nbagent-tool-reason")
    assert reason.is_visible() and "no_such_file.csv" in reason.inner_text()
    assert row.get_attribute("open") is None  # visible with the row closed
    shot("first-hour-02-failed-row")


def test_the_settings_tab_checks_the_tool_sets_the_agent_really_has(page, lab, model_server, shot):
    open_panel(page)
    page.locator(f"{PANEL} .jp-nbagent-tab[data-tab=settings]").click()
    boxes = page.locator(f"{PANEL} .jp-nbagent-setting-toolset input")
    boxes.first.wait_for()
    checked = {boxes.nth(i).get_attribute("value") for i in range(boxes.count()) if boxes.nth(i).is_checked()}
    # The server's agents run outside a kernel: the kernel tool set is not theirs, so it is not checked.
    assert "core" in checked and "kernel" not in checked and "read" not in checked, checked
    shot("first-hour-03-settings")
    page.locator(f"{PANEL} .jp-nbagent-tab[data-tab=chat]").click()
