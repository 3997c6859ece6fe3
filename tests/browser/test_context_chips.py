"""Attached context in the real panel: a workspace source shows as a chip with its status, its note as one
line in the turn it was delivered in, and the chip's × removes it."""

from __future__ import annotations

import pytest

from nbagent.attached.records import parse_output
from nbagent.attached.store import ContextStore
from nbagent.store.sessions import SessionStore
from nbagent.testing import Reply

from .test_lab_panel import PANEL, run_command  # noqa: E402  (tests/browser is on sys.path)

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_a_source_is_a_chip_and_its_note_a_line_of_the_turn(page, lab, model_server, shot):
    with SessionStore(lab.root) as sessions:
        ContextStore(sessions.db).push("build", parse_output("41 passed, 1 <b>failed</b>\nlog..."),
                                       why="the CI result")
    model_server.enqueue(Reply(text="One test fails."))
    run_command(page, "nbagent: Open the Agent Panel")
    page.locator(f"{PANEL} .jp-nbagent-sessions").wait_for()
    box = page.locator(f"{PANEL} .jp-nbagent-input textarea")
    box.fill("How is the build?")
    box.press("Enter")
    line = page.locator(f"{PANEL} .jp-nbagent-note", has_text="context: build attached")
    line.wait_for()
    assert "41 passed, 1 <b>failed</b>" in line.inner_text()  # shown as text, never as HTML
    chip = page.locator(f"{PANEL} .jp-nbagent-source-chip", has_text="build")
    chip.wait_for()
    assert "ok" in chip.inner_text() and "the CI result" in chip.get_attribute("title")
    shot("context-01-chip-and-note")
    chip.locator(".jp-nbagent-source-chip-name").click()
    page.locator(f"{PANEL} .jp-nbagent-source-chip.jp-mod-muted", has_text="build").wait_for()
    shot("context-02-muted")
    page.locator(f"{PANEL} .jp-nbagent-source-chip-remove").click()
    page.locator(f"{PANEL} .jp-nbagent-source-chip").wait_for(state="detached")
    shot("context-03-removed")
