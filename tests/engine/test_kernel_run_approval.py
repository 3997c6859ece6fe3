"""kernel_run asks even in "auto" mode unless kernel_run_auto is set; the kernel set is offered only
inside a kernel."""

from __future__ import annotations

import pytest
from nbagent.testing.replies import Call, Reply
from nbagent.tools.kernel import KernelBridge

pytestmark = pytest.mark.process


def bridge(namespace):
    def run(code):
        exec(compile(code, "<agent>", "exec"), namespace)
        return {"stdout": "", "stderr": "", "result": None, "error": None}

    return KernelBridge(namespace, run)


def script():
    return [Reply(tool_calls=[Call("kernel_run", {"code": "x = 42"})]), "done"]


def test_kernel_run_asks_in_auto_mode_and_is_denied_without_an_answer(make_agent):
    ns = {}
    asked = []
    agent = make_agent(*script(), approval="auto", kernel=bridge(ns), approver=lambda r: asked.append(r) or "deny")
    result = agent.run("set x")
    assert asked and asked[0].name == "kernel_run"
    assert result.tool_calls[0]["status"] == "denied" and "x" not in ns


def test_kernel_run_runs_with_approval(make_agent):
    ns = {}
    agent = make_agent(*script(), approval="auto", kernel=bridge(ns), approver=lambda r: "approve")
    assert agent.run("set x").tool_calls[0]["status"] == "done" and ns["x"] == 42


def test_kernel_run_auto_lets_it_run_without_asking(make_agent):
    ns = {}
    asked = []
    agent = make_agent(*script(), approval="auto", kernel=bridge(ns), kernel_run_auto=True,
                       approver=lambda r: asked.append(r) or "deny")
    agent.run("set x")
    assert ns["x"] == 42 and not asked


def test_kernel_tools_are_absent_outside_a_kernel(make_agent):
    model_agent = make_agent("hi")
    model_agent.run("hi")
    request = model_agent.runtime.model.requests[0]
    names = {t["name"] for t in request.tools}
    assert not any(n.startswith("kernel_") for n in names)
    assert "kernel_variables" not in request.system and "kernel_run" not in request.system
