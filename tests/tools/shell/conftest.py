"""Fixtures for the shell, task and git tools: a real workspace, a real tracker, real processes."""

from __future__ import annotations

import pytest

from nbagent.testing import close_tool_context, tool_context


@pytest.fixture
def ctx(tmp_path):
    context = tool_context(tmp_path, state=False)
    yield context
    close_tool_context(context)
