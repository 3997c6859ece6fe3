"""Explain / Ask / Fix on notebook outputs with collaboration disabled (output_actions_flow.py)."""

from __future__ import annotations

import pytest

from .output_actions_flow import run_output_actions

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab_args():
    return ["--expose-app-in-browser", "--YDocExtension.disable_rtc=True"]


def test_explain_fix_and_ask_on_outputs_by_keyboard(page, lab, shot, model_server, axe):
    run_output_actions(page, lab, shot, "no-rtc", model_server, axe)
