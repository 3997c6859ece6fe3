"""Compaction: automatic pruning of what goes on the wire, and the /compact summary that replaces it.

Automatic pruning (``prune``) runs before a request whose estimated size is over the threshold; the
stored history is never touched. ``/compact`` (``summarize_session``) has the model write a summary
that replaces the transcript on the wire; the older messages stay stored.

Pruning counts messages, so a cut can land between an assistant's tool call
and the tool message answering it; providers then answer 400 ("No tool call
found for function call output with call_id ..."). And the Responses API
refuses a function_call item whose reasoning item is gone. ``repair`` fixes
both; a call still awaiting its result is left alone (that is what a
suspended approval looks like).
"""

from __future__ import annotations

from typing import Any, Callable

from .. import events as ev
from ..session.message_log import message_chars

__all__ = ["estimate_tokens", "message_chars", "prune", "prune_at", "stripped_prefix", "cut_index", "repair",
           "summarize_session"]

Message = dict[str, Any]


def estimate_tokens(messages: list[Message]) -> int:
    """About four characters a token: good enough to decide when to prune."""
    return sum(message_chars(m) for m in messages) // 4


def prune(messages: list[Message], budget_tokens: int, keep_recent: int = 12) -> list[Message]:
    """Fit ``messages`` under ``budget_tokens``: older messages lose reasoning and tool traffic.

    The newest ``keep_recent`` messages (more while they fit) stay whole; older
    assistant messages keep their text only, older tool results go.
    """
    return prune_at(messages, cut_index([message_chars(m) for m in messages], budget_tokens, keep_recent))


def prune_at(messages: list[Message], cut: int) -> list[Message]:
    """Messages from ``cut`` on whole; before it, tool results go and assistants keep their text.
    What goes is never read: a resumed session leaves it in the store (nbagent.store.messages)."""
    # What _strip leaves has no tool calls and no tool results: repair has nothing to do there.
    return stripped_prefix(messages, cut) + repair(messages[cut:])


def stripped_prefix(messages: list[Message], cut: int) -> list[Message]:
    """What pruning keeps of the messages before ``cut``: no tool results, assistants' text only."""
    return [s for s in map(_strip, messages[:cut]) if s is not None]


def cut_index(sizes: list[int], budget_tokens: int, keep_recent: int = 12) -> int:
    """Where ``prune`` cuts messages of these sizes (``message_chars`` of each)."""
    cut = max(0, len(sizes) - keep_recent)
    used = sum(sizes[cut:]) // 4
    # Narrow the window while even the recent messages overflow, keeping at least the last two.
    while used > budget_tokens and cut < len(sizes) - 2:
        used -= sizes[cut] // 4
        cut += 1
    # Widen the kept window while it fits in half the budget: recent tool
    # results are what the model is working with.
    while cut > 0 and used + sizes[cut - 1] // 4 < budget_tokens // 2:
        cut -= 1
        used += sizes[cut] // 4
    return cut


def _strip(m: Message) -> Message | None:
    role = m.get("role")
    if role == "tool":
        return None
    if role == "assistant":
        if not m.get("content"):
            return None
        return {"role": "assistant", "content": m["content"]}
    return m


def repair(messages: list[Message]) -> list[Message]:
    """Drop calls whose reasoning item is gone, then results whose call is gone."""
    out: list[Message] = []
    live_calls: set[str] = set()
    for m in messages:
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            m = _drop_orphaned_calls(m)
            if m is None:
                continue
            live_calls.update(c["id"] for c in m.get("tool_calls") or ())
        elif role == "tool" and m.get("tool_call_id") not in live_calls:
            continue
        out.append(m)
    return out


def _drop_orphaned_calls(m: Message) -> Message | None:
    """Repair two: a Responses item whose reasoning item was dropped goes with it."""
    kept_reasoning = {item.get("id") for item in m.get("reasoning_items") or ()}
    calls = m["tool_calls"]
    good = [c for c in calls if not c.get("reasoning_id") or c["reasoning_id"] in kept_reasoning]
    if len(good) == len(calls):
        return m
    m = {**m, "tool_calls": good}
    if not good:
        del m["tool_calls"]
        if not m.get("content") and not m.get("reasoning_items"):
            return None
    return m


SUMMARY_PROMPT = """Write a summary of this conversation that can replace it entirely, so that the work can
go on from the summary alone. Use these headings: Goal; Files touched; Decisions; Commands and their
outcomes; What remains. Be specific (paths, names, numbers). Answer with the summary only."""


async def summarize_session(model, session, emit: Callable[[ev.AnyEvent], None], *, system: str = "",
                            tools: list[dict[str, Any]] | None = None) -> list[ev.Event]:
    """Replace the transcript on the wire by a model-written summary; a failure changes nothing.

    Given the session's ``system`` prompt and ``tools`` (with calls switched off), the request is the
    last one plus the summary prompt: the provider reads all of it but that prompt from its cache.
    Returns the events it emitted, the last being a turn_end (reason done or error) whose text is
    the summary.
    """
    from ..images.window import windowed
    from ..model.base import ModelRequest, ResponseDone

    # Images go as their captions: a summary is text, and the endpoint may not take images at all.
    messages = [*windowed(session.wire_messages(), 0), {"role": "user", "content": SUMMARY_PROMPT}]
    request = ModelRequest(system=system or "You summarise coding sessions.", messages=messages, tools=tools or [],
                           tool_choice="none" if tools else None, cache_key=session.id)
    summary = ""
    try:
        async for chunk in model.stream(request):
            if isinstance(chunk, ResponseDone):
                summary = chunk.message.get("content") or ""
    except Exception as exc:
        return _failed(emit, f"compaction failed, nothing changed: {exc}")
    if not summary.strip():
        return _failed(emit, "compaction failed: the model wrote no summary; nothing changed")
    before = len(session.wire_messages())
    session.set_summary({"role": "user", "summary": True,
                         "content": "Summary of the conversation so far:\n\n" + summary.strip()})
    event = ev.Compacted(before=before, after=1, message=f"transcript of {before} messages replaced by a summary")
    emit(event)
    return [event, ev.TurnEnd(reason="done", text=summary.strip())]


def _failed(emit: Callable[[ev.AnyEvent], None], message: str) -> list[ev.Event]:
    error = ev.Error(message=message, kind="compact")
    emit(error)
    return [error, ev.TurnEnd(reason="error")]
