"""A disabled tool set reaches neither the request's tool list nor the system prompt."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.process

EDIT_PLUS = {"read_many_files", "multi_edit", "list_dir"}
GIT = {"git_status", "git_diff", "git_log", "git_show", "git_blame"}
CORE = {"read_file", "write_file", "edit_file", "bash", "grep", "glob"}


def request_of(make_agent, **kwargs):
    agent = make_agent("ok", **kwargs)
    agent.run("hi")
    request = agent.runtime.model.requests[0]
    return {t["name"] for t in request.tools}, request.system


def test_default_sets_are_all_offered(make_agent):
    names, system = request_of(make_agent)
    assert CORE | EDIT_PLUS | GIT <= names
    # The schemas name every tool; the prompt carries each set's guide (said once, not listed again).
    assert "git_*" in system and all(n in system for n in EDIT_PLUS)


@pytest.mark.parametrize("enabled,absent", [(("edit-plus",), GIT), (("git",), EDIT_PLUS), ((), GIT | EDIT_PLUS)])
def test_a_disabled_set_is_absent_from_tools_and_prompt(make_agent, enabled, absent):
    names, system = request_of(make_agent, toolsets=enabled)
    assert CORE <= names, "core is always on"
    assert not names & absent
    for name in absent:
        assert name not in system, f"{name} is described in the prompt but cannot be called"


def test_memory_switch_removes_memory_tools(make_agent):
    names, system = request_of(make_agent, memory=False)
    assert not names & {"remember", "recall", "forget"}
    assert "remember" not in system
