"""The stored sessions as pandas DataFrames (re-exported as ``nbagent.sessions`` and friends).

    import nbagent
    nbagent.sessions(".")                      # one row per session, newest first
    nbagent.messages(".", "01j9")              # an id or a unique prefix
    nbagent.tool_calls(".", "01j9")            # name, arguments, status, duration (s)
    nbagent.usage(".", "01j9")                 # tokens and cost per turn

Times are timezone-aware UTC timestamps; a cost of None/NaN means "unknown", never zero.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from .sessions import SessionStore

SESSION_COLUMNS = ["id", "title", "model", "provider", "origin", "created", "updated", "turns",
                   "input_tokens", "output_tokens", "cost", "parent_id"]
MESSAGE_COLUMNS = ["idx", "turn", "created", "role", "content", "reasoning", "tool_calls", "tool_call_id",
                   "name", "is_error", "summary", "message"]
TOOL_CALL_COLUMNS = ["turn", "call_id", "name", "arguments", "status", "duration", "is_error", "created"]
USAGE_COLUMNS = ["turn", "calls", "input_tokens", "cached_tokens", "image_tokens", "output_tokens", "cost"]


@contextlib.contextmanager
def _store(workspace: str | Path | None) -> Iterator[SessionStore]:
    store = SessionStore(Path(workspace) if workspace is not None else Path.cwd())
    try:
        yield store
    finally:
        store.close()


def _times(series: Any) -> pd.Series:
    return pd.to_datetime(series, unit="s", utc=True)


def sessions(workspace: str | Path | None = None) -> pd.DataFrame:
    """Every session of the workspace, newest first. ``df.attrs["problems"]`` lists unreadable rows."""
    with _store(workspace) as store:
        listing = store.list()
    df = pd.DataFrame([info.to_dict() for info in listing], columns=SESSION_COLUMNS)
    df["created"], df["updated"] = _times(df["created"]), _times(df["updated"])
    df.attrs["problems"] = list(listing.problems)
    return df


def messages(workspace: str | Path | None, session_id: str) -> pd.DataFrame:
    """One row per stored message, in order; ``message`` holds the whole message dict."""
    with _store(workspace) as store:
        rows = store.messages(store.resolve(session_id))
    records = []
    for row in rows:
        m = row["message"]
        records.append({
            "idx": row["idx"], "turn": row["turn"], "created": row["created"], "role": m.get("role"),
            "content": m.get("content"), "reasoning": m.get("reasoning"), "tool_calls": m.get("tool_calls"),
            "tool_call_id": m.get("tool_call_id"), "name": m.get("name"), "is_error": m.get("is_error"),
            "summary": bool(m.get("summary", False)), "message": m,
        })
    df = pd.DataFrame(records, columns=MESSAGE_COLUMNS)
    df["created"] = _times(df["created"])
    return df


def tool_calls(workspace: str | Path | None, session_id: str) -> pd.DataFrame:
    """One row per tool call: name, arguments (parsed when JSON), status, duration in seconds."""
    with _store(workspace) as store:
        rows = store.tool_calls(store.resolve(session_id))
    records = [{
        "turn": r["turn"], "call_id": r["call_id"], "name": r["name"], "arguments": _parsed(r["arguments"]),
        "status": r["status"], "duration": None if r["duration_ms"] is None else r["duration_ms"] / 1000,
        "is_error": r.get("is_error"), "created": r["created"],
    } for r in rows]
    df = pd.DataFrame(records, columns=TOOL_CALL_COLUMNS)
    df["created"] = _times(df["created"])
    return df


def usage(workspace: str | Path | None, session_id: str) -> pd.DataFrame:
    """Tokens and cost per turn (model calls summed); a turn with any unpriced call has no cost.
    ``cached_tokens``: of the input tokens, those the provider read from its prompt cache;
    ``image_tokens``: of the input tokens, the estimate for the images the requests carried."""
    with _store(workspace) as store:
        rows = store.usage(store.resolve(session_id))
    turns: dict[int, dict[str, Any]] = {}
    for r in rows:
        t = turns.setdefault(r["turn"], {"turn": r["turn"], "calls": 0, "input_tokens": 0, "cached_tokens": 0,
                                         "image_tokens": 0, "output_tokens": 0, "cost": 0.0})
        t["calls"] += 1
        t["input_tokens"] += r["input_tokens"]
        t["cached_tokens"] += r.get("cached_tokens") or 0
        t["image_tokens"] += r.get("image_tokens") or 0
        t["output_tokens"] += r["output_tokens"]
        t["cost"] = None if t["cost"] is None or r["cost"] is None else t["cost"] + r["cost"]
    return pd.DataFrame(list(turns.values()), columns=USAGE_COLUMNS)


def _parsed(arguments: str | None) -> Any:
    if arguments is None:
        return None
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments
