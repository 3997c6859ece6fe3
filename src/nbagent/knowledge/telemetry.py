"""Local telemetry: one JSON line per turn in .nbagent/traces.jsonl, and the statistics read from it.

A line holds the turn's tokens, steps, cost, duration, each tool call with its outcome,
and the denials; the prompt is kept only scrubbed of secrets (render/redaction.py's scrub: API keys,
tokens, passwords in URLs, private keys) and cut short. The file is created with mode 0600 and rotated to
traces.jsonl.1 past 1,000 lines. Nothing is ever sent anywhere. Off with the telemetry
setting or NBAGENT_TELEMETRY=0.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from .. import events as ev
from ..render.redaction import preload, scrub
from ..workspace.state_dir import state_dir

FILE_NAME = "traces.jsonl"
MAX_LINES = 1_000
PROMPT_CHARS = 500


def telemetry_enabled(config) -> bool:
    flag = os.environ.get("NBAGENT_TELEMETRY", "").strip().lower()
    if flag in ("0", "false", "no", "off"):
        return False
    return bool(getattr(config, "telemetry", True))


class TraceRecorder:
    """Builds one record per turn from the event stream and appends it when the turn ends."""

    def __init__(self, path: Path, clock=time.time):
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()
        self._turns: dict[str, dict[str, Any]] = {}
        self._cost_seen: float | None = None

    @classmethod
    def for_workspace(cls, root: Path, config) -> "TraceRecorder | None":
        if not telemetry_enabled(config):
            return None
        preload()  # the secret patterns, so that the first turn's end does not wait for them
        return cls(Path(root) / ".nbagent" / FILE_NAME)

    def observe(self, event: ev.Event) -> None:
        turn = self._turns.get(event.turn_id)
        if isinstance(event, ev.TurnStart):
            self._turns[event.turn_id] = {
                "ts": round(self.clock(), 3), "turn_id": event.turn_id, "session_id": event.session_id,
                "prompt": event.prompt, "input_tokens": 0, "output_tokens": 0,
                "cached_tokens": 0, "cost": None, "tool_calls": [], "denials": [], "_start": time.monotonic(),
                "_cost_before": self._cost_seen,
            }
        elif turn is None:
            return
        elif isinstance(event, ev.Usage):
            turn["input_tokens"] += event.input_tokens
            turn["output_tokens"] += event.output_tokens
            turn["cached_tokens"] += event.cached_tokens
            if event.cost is not None:
                before = turn["_cost_before"] or 0.0
                turn["cost"] = round(event.cost - before, 6)
                self._cost_seen = event.cost
        elif isinstance(event, ev.ToolResult):
            turn["tool_calls"].append({"name": event.name, "status": event.status, "error": event.is_error,
                                       "ms": round(event.duration_ms, 1)})
            if event.status == "denied":
                turn["denials"].append(event.name)
        elif isinstance(event, ev.TurnEnd):
            self._turns.pop(event.turn_id, None)
            turn["steps"] = event.steps
            turn["reason"] = event.reason
            turn["duration_s"] = round(time.monotonic() - turn.pop("_start"), 3)
            turn.pop("_cost_before", None)
            turn["prompt"] = scrub(turn["prompt"])[:PROMPT_CHARS]  # scrubbed before it is cut or kept
            self.write(turn)

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            try:  # makes .nbagent/ with its .gitignore of "*"; refuses one that is a link or a file
                state_dir(self.path.parent.parent)
            except OSError:
                return  # a read-only workspace or a planted link: no trace rather than a write through it
            self._rotate_if_full()
            # O_NOFOLLOW: a symlink planted at the path must not redirect our writes.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)

    def _rotate_if_full(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))
        except OSError:
            return
        if lines >= MAX_LINES:
            os.replace(self.path, self.path.with_name(FILE_NAME + ".1"))


def read_traces(root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every turn recorded in the workspace (the rotated file first); broken lines are skipped."""
    base = Path(root).expanduser().resolve() / ".nbagent"
    records: list[dict[str, Any]] = []
    for path in (base / (FILE_NAME + ".1"), base / FILE_NAME):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records
