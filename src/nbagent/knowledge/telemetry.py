"""Local telemetry: one JSON line per turn in the state directory's traces.jsonl, and the statistics read from it.

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
from ..workspace.safe_read import read_text
from ..workspace.state_dir import TRACES, find_state_file, location, open_append, private_dir, state_dir

FILE_NAME = TRACES
MAX_LINES = 1_000
PROMPT_CHARS = 500


def telemetry_enabled(config) -> bool:
    flag = os.environ.get("NBAGENT_TELEMETRY", "").strip().lower()
    if flag in ("0", "false", "no", "off"):
        return False
    return bool(getattr(config, "telemetry", True))


class TraceRecorder:
    """Builds one record per turn from the event stream and appends it when the turn ends."""

    def __init__(self, path: Path, clock=time.time, *, root: Path | None = None):
        self.path = path
        self.root = root
        """The workspace whose state directory holds ``path`` (None: ``path``'s folder is checked alone)."""
        self.clock = clock
        self._lock = threading.Lock()
        self._turns: dict[str, dict[str, Any]] = {}
        self._cost_seen: float | None = None

    @classmethod
    def for_workspace(cls, root: Path, config) -> "TraceRecorder | None":
        if not telemetry_enabled(config):
            return None
        return cls(location(root) / TRACES, root=Path(root))

    _preloaded = False

    def observe(self, event: ev.Event) -> None:
        if not self._preloaded and not isinstance(event, ev.TurnStart):
            # The secret patterns, so that the first turn's end does not wait for them: loaded once the
            # turn is under way, not at start-up, where importing detect-secrets on another thread held
            # the interpreter while the CLI's first request was being built (python -X importtime).
            self._preloaded = True
            preload()
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
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            try:  # the state directory checked level by level; the file never a link nor a FIFO
                folder = state_dir(self.root) if self.root is not None else private_dir(self.path.parent)
                path = folder / self.path.name
                fd = open_append(path)
            except OSError:
                return  # a read-only workspace or a planted link or FIFO: no trace rather than a hang
            try:
                if _line_count(fd) >= MAX_LINES:
                    os.close(fd)
                    fd = -1
                    os.replace(path, path.with_name(path.name + ".1"))
                    fd = open_append(path)
                os.write(fd, line)
            except OSError:
                return
            finally:
                if fd >= 0:
                    os.close(fd)


def _line_count(fd: int) -> int:
    lines, offset = 0, 0
    while chunk := os.pread(fd, 1 << 16, offset):
        lines += chunk.count(b"\n")
        offset += len(chunk)
    return lines


def read_traces(root: str | os.PathLike[str], file_name: str = TRACES) -> list[dict[str, Any]]:
    """Every turn recorded in the workspace (the rotated file first); broken lines are skipped.
    ``file_name=COMPLETIONS``: every inline completion's request instead (nbagent.complete.usage)."""
    records: list[dict[str, Any]] = []
    for name in (file_name + ".1", file_name):
        try:
            path = find_state_file(Path(root).expanduser(), name)
            lines = read_text(path).splitlines() if path is not None else []
        except OSError:  # a link, a FIFO, someone else's folder: not read
            continue
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records
