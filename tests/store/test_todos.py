"""todo_write: replace the whole list, refuse a blocked item without a note, warn, emit, save."""

from __future__ import annotations

import pytest

from nbagent.errors import ToolError
from nbagent.events import TodosChanged
from nbagent.store.sessions import SessionStore
from nbagent.tools.todos import TODOS, render_todos

from .tooling import call, make_context

TODO_WRITE = TODOS.tools[0]


def test_todo_write_replaces_the_list_saves_it_and_emits(workspace):
    ctx = make_context(workspace)
    call(ctx, TODO_WRITE, todos=[{"content": "a", "status": "pending"}, {"content": "b", "status": "pending"}])
    result = call(ctx, TODO_WRITE, todos=[
        {"content": "read the code", "status": "completed"},
        {"content": "fix  the\nboundary", "status": "in_progress"},
        {"content": "update the docs", "status": "blocked", "note": "no wiki access"},
    ])
    expected = [{"content": "read the code", "status": "completed"},
                {"content": "fix the boundary", "status": "in_progress"},
                {"content": "update the docs", "status": "blocked", "note": "no wiki access"}]
    assert ctx.state.todos == expected
    assert "Warning" not in result and "[~] fix the boundary" in result
    events = ctx.extras["events"]
    assert [type(e) for e in events] == [TodosChanged, TodosChanged] and events[-1].todos == expected
    assert events[-1].turn_id == "t1"
    with SessionStore(workspace) as store:  # saved with the session
        assert store.load(ctx.state.session.id).todos == expected


def test_blocked_without_note_is_refused_and_changes_nothing(workspace):
    ctx = make_context(workspace)
    call(ctx, TODO_WRITE, todos=[{"content": "x", "status": "in_progress"}])
    with pytest.raises(ToolError, match="blocked without a note"):
        call(ctx, TODO_WRITE, todos=[{"content": "y", "status": "blocked"}])
    with pytest.raises(ToolError, match="status"):
        call(ctx, TODO_WRITE, todos=[{"content": "y", "status": "doing"}])
    assert ctx.state.todos == [{"content": "x", "status": "in_progress"}]


def test_warnings_for_two_in_progress_and_for_none_while_work_remains(workspace):
    ctx = make_context(workspace)
    two = call(ctx, TODO_WRITE, todos=[{"content": "a", "status": "in_progress"},
                                      {"content": "b", "status": "in_progress"}])
    assert "2 items are in_progress" in two
    idle = call(ctx, TODO_WRITE, todos=[{"content": "a", "status": "completed"},
                                       {"content": "b", "status": "pending"}])
    assert "nothing is in_progress while 1 item(s) remain" in idle
    finished = call(ctx, TODO_WRITE, todos=[{"content": "a", "status": "completed"}])
    assert "Warning" not in finished


def test_render_todos_for_the_system_prompt():
    assert render_todos([]) == ""
    text = render_todos([{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"},
                         {"content": "c", "status": "pending"}, {"content": "d", "status": "blocked", "note": "n"}])
    assert text.splitlines() == ["Task list (1/4 done, 1 blocked):", "[x] a", "[~] b", "[ ] c", "[!] d (n)"]


def test_todo_write_needs_no_approval():
    assert TODO_WRITE.name == "todo_write" and TODO_WRITE.approval == "never"
