"""The open notebook follows the agent's edits with jupyter-collaboration (the live shared document)."""

from __future__ import annotations

import pytest

from .live_flow import run_live_flow

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab_args():
    return ["--expose-app-in-browser", "--YDocExtension.document_save_delay=0.2"]


def test_agent_edits_show_at_once_and_save_cleanly(page, lab, shot, model_server):
    run_live_flow(page, lab, shot, "rtc", model_server)
