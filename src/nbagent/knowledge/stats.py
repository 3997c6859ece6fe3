"""``nbagent.stats(workspace)``: the telemetry of a workspace as DataFrames, and its one-screen summary."""

from __future__ import annotations

from typing import Any

from ..workspace.state_dir import COMPLETIONS
from .telemetry import read_traces

TOOL_COLUMNS = ["calls", "failed", "denied", "fail_rate", "deny_rate", "mean_ms"]
TURN_COLUMNS = ["ts", "session_id", "steps", "reason", "input_tokens", "cached_tokens", "output_tokens", "cost",
                "duration_s", "tool_calls", "denials"]


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    turns = len(records)
    costs = [r["cost"] for r in records if isinstance(r.get("cost"), (int, float))]
    durations = [r["duration_s"] for r in records if isinstance(r.get("duration_s"), (int, float))]
    calls = sum(len(r.get("tool_calls") or []) for r in records)
    denials = sum(len(r.get("denials") or []) for r in records)
    return {
        "turns": turns,
        "input_tokens": sum(int(r.get("input_tokens") or 0) for r in records),
        "cached_tokens": sum(int(r.get("cached_tokens") or 0) for r in records),
        "output_tokens": sum(int(r.get("output_tokens") or 0) for r in records),
        "cost": round(sum(costs), 6) if costs else None,
        "mean_duration_s": round(sum(durations) / len(durations), 3) if durations else None,
        "tool_calls": calls,
        "deny_rate": round(denials / calls, 3) if calls else None,
    }


def completion_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Inline completions' requests (nbagent.complete.usage), their own kind beside the turns: how many,
    how many the next keystroke cancelled, their tokens and cost (a cancelled one's tokens are estimated)."""
    costs = [r["cost"] for r in records if isinstance(r.get("cost"), (int, float))]
    return {
        "requests": len(records),
        "cancelled": sum(1 for r in records if r.get("cancelled")),
        "input_tokens": sum(int(r.get("input_tokens") or 0) for r in records),
        "output_tokens": sum(int(r.get("output_tokens") or 0) for r in records),
        "cost": round(sum(costs), 6) if costs else None,
    }


def read_completions(workspace: Any) -> list[dict[str, Any]]:
    return read_traces(workspace, COMPLETIONS)


def per_tool(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per tool, the most failing first."""
    tools: dict[str, dict[str, Any]] = {}
    for record in records:
        for call in record.get("tool_calls") or []:
            row = tools.setdefault(str(call.get("name", "?")), {"calls": 0, "failed": 0, "denied": 0, "ms": 0.0})
            row["calls"] += 1
            row["denied"] += call.get("status") == "denied"
            row["failed"] += bool(call.get("error")) and call.get("status") != "denied"
            row["ms"] += float(call.get("ms") or 0)
    rows = [{"tool": name, "calls": r["calls"], "failed": r["failed"], "denied": r["denied"],
             "fail_rate": round(r["failed"] / r["calls"], 3), "deny_rate": round(r["denied"] / r["calls"], 3),
             "mean_ms": round(r["ms"] / r["calls"], 1)} for name, r in tools.items()]
    return sorted(rows, key=lambda r: (-r["failed"], -r["denied"], -r["calls"], r["tool"]))


def stats(workspace: Any = ".", by: str = "tool"):
    """The workspace's telemetry as a DataFrame.

    ``by="tool"`` (default): one row per tool (calls, failed, denied, their rates, mean duration), the
    most failing first; the totals (turns, tokens, cached tokens, cost, mean duration, deny rate) are in
    ``.attrs``.
    ``by="turn"``: one row per recorded turn.
    Inline completions are their own kind: ``.attrs["completions"]`` (requests, cancelled, tokens, cost).
    """
    import pandas as pd

    records = read_traces(workspace)
    if by == "turn":
        rows = [{**{k: r.get(k) for k in TURN_COLUMNS}, "tool_calls": len(r.get("tool_calls") or []),
                 "denials": len(r.get("denials") or [])} for r in records]
        frame = pd.DataFrame(rows, columns=TURN_COLUMNS)
        frame["ts"] = pd.to_datetime(frame["ts"], unit="s", utc=True)
    elif by == "tool":
        frame = pd.DataFrame(per_tool(records), columns=["tool", *TOOL_COLUMNS]).set_index("tool")
    else:
        raise ValueError(f"by must be 'tool' or 'turn', not {by!r}")
    frame.attrs.update(summary(records))
    frame.attrs["completions"] = completion_summary(read_completions(workspace))
    return frame
