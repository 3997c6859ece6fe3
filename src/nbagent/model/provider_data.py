"""Fields a provider sends that nbagent does not interpret, kept and sent back to that provider only.

Some providers reject the next request unless the assistant message carries back
what they sent with it: Gemini's thought signature in a tool call's
``extra_content``, DeepSeek's ``reasoning_content`` on a message with tool calls,
OpenRouter's ``reasoning_details``. The chat adapter keeps every field of a
message or tool call it does not know, merged over the stream's deltas, and
stores them on the message under ``provider_data`` with the provider and model
they came from. They go back unchanged while the session talks to that same
provider and model, and are dropped when it moves to another (a signature from
one model means nothing to the next, and may be refused).
"""

from __future__ import annotations

from typing import Any

from ..render.redaction import public_url

KEY = "provider_data"
NOT_SENT_BACK = frozenset({"reasoning"})
"""Kept, never sent back: a plain copy of the reasoning that Groq (among others) refuses on input."""
ONLY_WITH_TOOL_CALLS = frozenset({"reasoning_content"})
"""DeepSeek wants its reasoning back on a message that made tool calls (the turn goes on from it),
and older DeepSeek models refuse it on a plain answer."""


def origin_of(base_url: str | None, model: str) -> str:
    """Which provider and model a message's fields belong to."""
    return f"{public_url(base_url) or 'openai'} {model}"


LABELS = frozenset({"index", "type", "id", "format", "name", "role", "call_id", "status"})
"""Keys that label a part and repeat in every delta (OpenRouter repeats ``format``): replaced, not appended."""


def merge_delta(acc: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """Merge one streamed delta into what came before: a null is ignored, strings are appended (except
    LABELS), dicts merged, list entries carrying an ``index`` merged with the entry of that index; anything else replaces.

    Written here rather than taken from the openai SDK's private accumulator, which adds up
    numbers and raises on list entries without an ``index`` (both seen from real providers).
    """
    for key, value in delta.items():
        old = acc.get(key)
        if value is None and old is not None:
            continue  # a null never erases what came before (DeepSeek: "reasoning_content": null after it)
        if old is None or key in LABELS:
            acc[key] = value
        elif isinstance(old, str) and isinstance(value, str):
            acc[key] = old + value
        elif isinstance(old, dict) and isinstance(value, dict):
            merge_delta(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            _merge_list(old, value)
        else:
            acc[key] = value
    return acc


def _merge_list(old: list[Any], new: list[Any]) -> None:
    for entry in new:
        index = entry.get("index") if isinstance(entry, dict) else None
        same = next((e for e in old if isinstance(e, dict) and isinstance(index, int) and e.get("index") == index),
                    None)
        if same is not None:
            merge_delta(same, entry)
        else:
            old.append(entry)


def attach(message: dict[str, Any], origin: str, fields: dict[str, Any], calls: dict[str, dict]) -> None:
    """Store the unknown fields (of the message, and of each tool call by id) on ``message``."""
    fields = {k: v for k, v in fields.items() if v is not None}
    calls = {k: v for k, v in calls.items() if v}
    if fields or calls:
        message[KEY] = {"origin": origin, "message": fields, "calls": calls}


def mark_origin(message: dict[str, Any], origin: str) -> None:
    """Label a message whose provider-specific parts live elsewhere in it (Responses reasoning items)."""
    message.setdefault(KEY, {"origin": origin, "message": {}, "calls": {}})


def same_origin(message: dict[str, Any], origin: str) -> bool:
    """Whether the message's provider data may go to ``origin`` (unlabelled: stored before labels)."""
    data = message.get(KEY)
    return not isinstance(data, dict) or data.get("origin") in (None, origin)


def message_fields(message: dict[str, Any], origin: str) -> dict[str, Any]:
    """The fields to send back on this message to ``origin`` (none for another provider or model)."""
    data = message.get(KEY)
    if not isinstance(data, dict) or data.get("origin") != origin:
        return {}
    fields = data.get("message") or {}
    left_out = NOT_SENT_BACK if message.get("tool_calls") else NOT_SENT_BACK | ONLY_WITH_TOOL_CALLS
    return {k: v for k, v in fields.items() if k not in left_out}


def call_fields(message: dict[str, Any], origin: str, call_id: str) -> dict[str, Any]:
    """The fields to send back on one tool call of this message to ``origin``."""
    data = message.get(KEY)
    if not isinstance(data, dict) or data.get("origin") != origin:
        return {}
    return dict((data.get("calls") or {}).get(call_id) or {})
