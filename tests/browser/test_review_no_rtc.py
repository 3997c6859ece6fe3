"""Keep or undo a turn's changes cell by cell and hunk by hunk in the open notebook, with collaboration disabled (the tab's own model)."""

from __future__ import annotations

import pytest

from .review_flow import run_file_review, run_review_flow

pytestmark = [pytest.mark.browser, pytest.mark.integration]


@pytest.fixture(scope="module")
def lab_args():
    return ["--expose-app-in-browser", "--YDocExtension.disable_rtc=True"]


@pytest.fixture(scope="module")
def lab_env(model_server):
    """The panel's turns write without asking: this test is about the review after the turn."""
    return {"OPENAI_BASE_URL": model_server.url, "OPENAI_API_KEY": "sk-test", "NBAGENT_MODEL": "scripted-model",
            "NBAGENT_LOCAL": "off", "NBAGENT_APPROVAL": "auto"}


def test_keep_undo_and_redo_by_keyboard(page, lab, shot, axe, model_server):
    run_review_flow(page, lab, shot, axe, "no-rtc", model_server)


def test_a_text_files_hunk_undone_in_its_diff_view(page, lab, shot, axe, model_server):
    run_file_review(page, lab, shot, axe, "no-rtc", model_server)
