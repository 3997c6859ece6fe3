"""The open notebook follows the agent's edits with collaboration disabled (through the tab's model)."""

from __future__ import annotations

import pytest

from .live_flow import run_live_flow

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab_args():
    return ["--expose-app-in-browser", "--YDocExtension.disable_rtc=True"]


def test_agent_edits_show_at_once_and_save_cleanly(page, lab, shot, model_server):
    run_live_flow(page, lab, shot, "no-rtc", model_server)
