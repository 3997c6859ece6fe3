"""Completions' costs on disk: one JSON line per model request in the state directory's completions.jsonl.

Kept apart from the turns' traces.jsonl (nbagent.knowledge.telemetry): completions come by the
hundred an hour, and would rotate the turns out of that file. Written with the same writer (0600, no
link followed, rotated past 1,000 lines), off with the telemetry setting like the traces, and read by
``nbagent stats`` (nbagent.knowledge.stats), which counts them as their own kind.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..knowledge.telemetry import TraceRecorder, telemetry_enabled
from ..workspace.state_dir import COMPLETIONS, location


def record_completion(root: Path, config: Any, model: str, base_url: str | None, mode: str, usage: Any, *,
                      ms: float, cancelled: bool, estimated: bool) -> None:
    if not telemetry_enabled(config):
        return
    from ..model.cost import cost_of

    cost = None if estimated else cost_of(model, base_url, usage.input_tokens, usage.output_tokens,
                                          cached_tokens=usage.cached_tokens)
    record = {"ts": round(time.time(), 3), "kind": "completion", "model": model, "mode": mode,
              "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
              "cached_tokens": usage.cached_tokens, "cost": cost, "ms": round(ms, 1),
              "cancelled": cancelled, "estimated": estimated}
    TraceRecorder(location(root) / COMPLETIONS, root=root).write(record)
