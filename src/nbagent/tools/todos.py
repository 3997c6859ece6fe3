"""The task list: ``todo_write`` replaces it whole; ``render_todos`` puts it in every step's system prompt."""

from __future__ import annotations

from typing import Any, Literal

import pydantic

from ..errors import ToolError
from ..events import TodosChanged
from .base import ToolSet, function_tool
from .context import ToolContext

STATUSES = ("pending", "in_progress", "completed", "blocked")
_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]", "blocked": "[!]"}


class TodoItem(pydantic.BaseModel):
    content: str = pydantic.Field(description="What to do, as one short imperative line.")
    status: Literal["pending", "in_progress", "completed", "blocked"]
    note: str | None = pydantic.Field(None, description="Required when blocked: what blocks it.")


def todo_write(ctx: ToolContext, todos: list[TodoItem]) -> str:
    """Replace the whole task list. Keep exactly one item in_progress while you work; mark items
    completed once done; a blocked item needs a note.

    Args:
        todos: The complete list, in order; items left out are dropped.
    """
    items = [_clean(i, item) for i, item in enumerate(todos, start=1)]
    ctx.state.set_todos(items)
    ctx.emit(TodosChanged(todos=items, turn_id=ctx.turn_id))
    text = render_todos(items) or "The task list is now empty."
    return "\n".join([text, *todo_warnings(items)])


def _clean(position: int, item: TodoItem | dict[str, Any]) -> dict[str, Any]:
    item = item if isinstance(item, TodoItem) else TodoItem.model_validate(item)
    content = " ".join(item.content.split())
    note = " ".join((item.note or "").split())
    if not content:
        raise ToolError(f"item {position} has no content")
    if item.status == "blocked" and not note:
        raise ToolError(f"item {position} ({content!r}) is blocked without a note: say what blocks it")
    out: dict[str, Any] = {"content": content, "status": item.status}
    if note:
        out["note"] = note
    return out


def todo_warnings(todos: list[dict[str, Any]]) -> list[str]:
    working = sum(t["status"] == "in_progress" for t in todos)
    waiting = sum(t["status"] == "pending" for t in todos)
    if working > 1:
        return [f"Warning: {working} items are in_progress; work on one at a time and set the others "
                "back to pending."]
    if working == 0 and waiting:
        return [f"Warning: nothing is in_progress while {waiting} item(s) remain; mark the one you work "
                "on now in_progress."]
    return []


def render_todos(todos: list[dict[str, Any]]) -> str:
    """The list as the model (and a text front end) sees it; empty when there is no list."""
    if not todos:
        return ""
    done = sum(t.get("status") == "completed" for t in todos)
    blocked = sum(t.get("status") == "blocked" for t in todos)
    head = f"Task list ({done}/{len(todos)} done" + (f", {blocked} blocked" if blocked else "") + "):"
    lines = [head]
    for t in todos:
        line = f"{_MARKS.get(str(t.get('status')), '[?]')} {t.get('content', '')}"
        if t.get("note"):
            line += f" ({t['note']})"
        lines.append(line)
    return "\n".join(lines)


TODOS = ToolSet("todos", [
    # The list is the agent's own plan and never touches the workspace: no approval, even in
    # approval="read-only" mode. Not read_only, so two calls in one step run in order, not at once.
    function_tool(todo_write, read_only=False, approval="never",
                  prompt_hint="todo_write keeps the task list for work of three steps or more."),
], description="A task list rendered into the system prompt on every step.")
