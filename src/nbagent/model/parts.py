"""Message content that arrives as a list of typed parts instead of a string.

Mistral's reasoning models (and others) send ``content`` as
``[{"type": "text", "text": ...}, {"type": "thinking", "thinking": [{"type": "text", "text": ...}]}]``,
in stream deltas and in whole completions alike. Text parts become the answer,
thinking and reasoning parts the reasoning; parts of any other type are left out.
"""

from __future__ import annotations

from typing import Any

THINKING_TYPES = frozenset({"thinking", "reasoning", "reasoning_text", "summary_text"})


def split_content(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a content value: a string, None, or a list of typed parts."""
    if content is None:
        return "", ""
    if isinstance(content, str):
        return content, ""
    if not isinstance(content, list):
        return str(content), ""
    text: list[str] = []
    reasoning: list[str] = []
    for part in content:
        if isinstance(part, str):
            text.append(part)
            continue
        part = part if isinstance(part, dict) else getattr(part, "model_dump", lambda: {})()
        kind = part.get("type")
        if kind in ("text", "output_text"):
            text.append(_text_of(part.get("text")))
        elif kind in THINKING_TYPES:
            reasoning.append(_text_of(part.get(kind) if kind in part else part.get("text")))
    return "".join(text), "".join(reasoning)


def _text_of(value: Any) -> str:
    """A part's text: a string, or (nested thinking) a list of text parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text_of(v.get("text") if isinstance(v, dict) else v) for v in value)
    if isinstance(value, dict):
        return _text_of(value.get("text"))
    return ""
