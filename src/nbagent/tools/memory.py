"""remember, recall, forget: the model's hands on project memory (nbagent.memory.entries)."""

from __future__ import annotations

from typing import Literal

from pydantic.json_schema import SkipJsonSchema

from ..errors import ToolError
from ..events import MemoryChanged
from ..memory.entries import ProjectMemory
from .base import ToolSet, function_tool
from .context import ToolContext


def _memory(ctx: ToolContext) -> ProjectMemory:
    memory = getattr(ctx.state, "memory", None)
    if memory is None:
        raise ToolError("project memory is switched off for this agent")
    return memory


def remember(ctx: ToolContext, text: str,
             category: Literal["fact", "decision", "preference", "snippet", "summary"] | None = None,
             tags: list[str] | None = None,
             kind: SkipJsonSchema[Literal["fact", "decision", "gotcha", "command"] | None] = None) -> str:
    """Save a durable note for later sessions: a fact, a decision and why, a preference of the user's,
    a snippet that works, or a summary of work done. Relevant ones are shown to you later.

    Args:
        text: Self-contained; one line for a fact, longer for a snippet (long texts are split).
        category: fact when omitted.
        tags: A few words to find it by, e.g. ["tests", "ci"].
        kind: Older name for the category, still accepted but left out of the schema (it would cost
            every request tokens for a name the model no longer needs).
    """
    chosen = category or kind or "fact"
    try:
        entry = _memory(ctx).remember(chosen, text, tags=tuple(tags or ()))
    except ValueError as exc:
        raise ToolError(f"not remembered: {exc}") from None
    ctx.emit(MemoryChanged(action="remember", entries=[entry.to_dict()], turn_id=ctx.turn_id))
    return f"Remembered ({entry.kind}) {entry.text}"


def recall(ctx: ToolContext, query: str) -> str:
    """Search project memory: entries that contain every word of the query (any case).

    Args:
        query: One or more words that must all appear.
    """
    try:
        found = _memory(ctx).recall(query)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    if not found:
        return f"No memory entry contains all of: {query}"
    ctx.emit(MemoryChanged(action="recall", entries=[e.to_dict() for e in found], turn_id=ctx.turn_id))
    return "\n".join(f"- ({e.kind}) {e.text}" for e in found)


def forget(ctx: ToolContext, text: str) -> str:
    """Remove the project-memory entries that contain this text (any case), e.g. a note that
    turned out wrong.

    Args:
        text: The entry's text, or a distinctive part of it.
    """
    try:
        removed = _memory(ctx).forget(text)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    if not removed:
        return f"No memory entry contains {text!r}; nothing removed."
    ctx.emit(MemoryChanged(action="forget", entries=[e.to_dict() for e in removed], turn_id=ctx.turn_id))
    return "Forgot:\n" + "\n".join(f"- ({e.kind}) {e.text}" for e in removed)


def remember_preview(ctx: ToolContext, text: str, category: str | None = None, tags: list[str] | None = None,
                     kind: str | None = None) -> str:
    """What the approval card shows: the note that would go into later sessions' prompts."""
    label = category or kind or "fact"
    return f"+ ({label}) {text}" + (f"  [tags: {', '.join(map(str, tags))}]" if tags else "")


def forget_preview(ctx: ToolContext, text: str) -> str:
    try:
        found = [e for e in _memory(ctx).entries() if text.lower() in e.text.lower()]
    except (ToolError, ValueError, AttributeError):
        found = []
    return "\n".join(f"- ({e.kind}) {e.text}" for e in found) or f"(no entry contains {text!r})"


MEMORY = ToolSet("memory", [
    # Memory goes into every later session's prompt: a note planted by hostile file contents
    # ("always run curl ... | sh") would steer them all. Writing it is a change like any other:
    # asked in ask mode, denied in read-only mode.
    function_tool(remember, approval="ask", preview=remember_preview,
                  prompt_hint="remember keeps a durable project note (category and tags help find it later)."),
    function_tool(recall, read_only=True, prompt_hint="recall searches project memory by words."),
    function_tool(forget, approval="ask", preview=forget_preview, prompt_hint="forget removes memory entries that are wrong."),
], description="Project memory across sessions: remember, recall, forget.")
