"""Approval modes, the approver callable, decide() from another thread, and user tools."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from nbagent import events as ev, function_tool
from nbagent.errors import ToolRegistrationError
from nbagent.testing.replies import Call, Reply


def write_note(text: str) -> str:
    """Write a note (a tool that changes things, so it asks).

    Args:
        text: the note
    """
    NOTES.append(text)
    return "written"


NOTES: list[str] = []


@pytest.fixture(autouse=True)
def _clear_notes():
    NOTES.clear()


def _script(n=1):
    return [Reply(tool_calls=[Call("write_note", {"text": f"n{i}"})]) for i in range(n)] + ["done"]


@pytest.mark.process
def test_ask_mode_with_an_approver_that_approves(make_agent):
    requests = []

    def approver(request):
        requests.append(request)
        return "approve"

    result = make_agent(*_script(), tools=[write_note], approver=approver).run("note")
    assert NOTES == ["n0"] and result.tool_calls[0]["status"] == "done"
    assert requests[0].name == "write_note" and requests[0].arguments == {"text": "n0"}
    kinds = [e.type for e in result.events]
    assert kinds.index("tool_call") < kinds.index("approval_request") < kinds.index("approval_decision")


@pytest.mark.process
def test_a_denied_call_is_reported_to_the_model_as_denied(make_agent):
    agent = make_agent(*_script(), tools=[write_note], approver=lambda r: "deny")
    result = agent.run("note")
    assert NOTES == []
    (call,) = result.tool_calls
    assert call["status"] == "denied" and "denied by the user" in call["output"]
    assert agent.runtime.model.requests[1].messages[-1]["content"].startswith("denied by the user")


@pytest.mark.process
def test_always_approves_that_tool_for_the_rest_of_the_session(make_agent):
    asked = []
    agent = make_agent(*_script(3), tools=[write_note], approver=lambda r: asked.append(r) or "always")
    agent.run("notes")
    assert NOTES == ["n0", "n1", "n2"] and len(asked) == 1


@pytest.mark.process
def test_read_only_wins_over_an_always_given_before_the_switch(make_agent):
    first, second = _script(1), [Reply(tool_calls=[Call("write_note", {"text": "n1"})]), "done"]
    agent = make_agent(*first, *second, tools=[write_note], approver=lambda r: "always")
    agent.run("first")
    assert NOTES == ["n0"]
    agent.reconfigure(approval="read-only")
    result = agent.run("second")
    assert NOTES == ["n0"] and result.tool_calls[0]["status"] == "denied"


@pytest.mark.process
def test_decide_from_another_thread_answers_a_waiting_request(make_agent):
    agent = make_agent(*_script(), tools=[write_note])
    requests: list[Any] = []

    def on_event(event):
        if isinstance(event, ev.ApprovalRequest):
            requests.append(event)
            threading.Timer(0.05, agent.decide, (event.call_id, "approve")).start()

    agent.subscribe(on_event)
    result = agent.run("note", timeout=10)
    assert NOTES == ["n0"] and result.reason == "done" and len(requests) == 1


@pytest.mark.process
def test_read_only_mode_denies_changes_and_auto_approves_all(make_agent):
    denied = make_agent(*_script(), tools=[write_note], approval="read-only").run("x")
    assert NOTES == []
    (call,) = denied.tool_calls  # the model hears why: the mode, not a user who was never asked
    assert call["status"] == "denied" and "read-only" in call["output"] and "by the user" not in call["output"]
    make_agent(*_script(), tools=[write_note], approval="auto").run("x")
    assert NOTES == ["n0"]


def test_a_missing_type_hint_is_an_error_at_registration():
    def untyped(x) -> str:
        """No hint on x."""
        return x

    with pytest.raises(ToolRegistrationError, match="no type hint"):
        function_tool(untyped)


def test_a_missing_docstring_is_an_error_at_registration():
    def nodoc(x: int) -> int:
        return x

    with pytest.raises(ToolRegistrationError, match="docstring"):
        function_tool(nodoc)


def test_schema_is_derived_from_the_signature_and_docstring():
    def search(query: str, limit: int = 10, tags: list[str] | None = None) -> str:
        """Search the catalogue.

        Args:
            query: words to look for
            limit: at most this many results
            tags: only entries with these tags
        """
        return query

    t = function_tool(search)
    assert t.description == "Search the catalogue."
    props = t.parameters["properties"]
    assert props["query"] == {"type": "string", "description": "words to look for"}
    assert props["limit"]["type"] == "integer" and props["limit"]["default"] == 10
    assert t.parameters["required"] == ["query"]
    assert t.validate({"query": "x"}) == {"query": "x"}


@pytest.mark.process
def test_a_tool_raises_nbagent_tool_error_for_a_message_written_for_the_model(make_agent):
    """``from nbagent import ToolError``, as the docs tell tool authors (issue 25, "Names")."""
    import nbagent
    from nbagent import ToolError

    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: the key
        """
        raise ToolError(f"no key {key!r}: keys are lower case")

    assert "ToolError" in nbagent.__all__ and ToolError is nbagent.errors.ToolError
    agent = make_agent(Reply(tool_calls=[Call("lookup", {"key": "K"})]), "done",
                       tools=[function_tool(lookup, read_only=True)])
    (call,) = agent.run("look").tool_calls
    assert call["status"] == "failed" and call["output"] == "no key 'K': keys are lower case"
