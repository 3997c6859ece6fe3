"""Stored outputs against fresh ones, nbval-style: text compared after sanitizers blank what varies.

nbval's own comparison lives inside its pytest items, so the same rules are written here (small and
fixed): streams by name and text, results and displays by their ``text/plain`` (other types by
presence only: a figure's bytes differ from run to run), errors by name and value. The sanitizers
replace memory addresses, dates, times, durations and uuids, as nbval's documented sanitize files do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..render.escape import truncate

SANITIZERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"0x[0-9a-fA-F]{4,}"), "0xADDRESS"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "UUID"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?"), "DATETIME"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b"), "TIME"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|seconds|min)\b"), "DURATION"),
    (re.compile(r"(CPU times|Wall time|Peak memory):.*"), r"\1: ..."),
)


@dataclass
class Difference:
    cell_index: int
    cell_id: str
    stored: str
    now: str
    diff: str = ""
    """The stored outputs against the fresh ones as a unified diff (a line per output line, - stored,
    + now; long ones capped), what a report shows."""


def sanitize(text: str) -> str:
    for pattern, replacement in SANITIZERS:
        text = pattern.sub(replacement, text)
    return text.strip()


def comparable(outputs: list[dict]) -> list[str]:
    """Each output as sanitized text; consecutive streams of one name are joined (as a notebook shows them)."""
    parts: list[str] = []
    last_stream = None
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text = _text(out.get("text", ""))
            if last_stream == out.get("name") and parts:
                parts[-1] += text
            else:
                parts.append(text)
            last_stream = out.get("name")
            continue
        last_stream = None
        if kind in ("execute_result", "display_data"):
            data = out.get("data") or {}
            if "text/plain" in data:
                parts.append(_text(data["text/plain"]))
            else:
                parts.append("<" + ", ".join(sorted(data)) + ">")
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
    return [sanitize(p) for p in parts]


def differences(stored_cells: list[dict], ran_cells: list[dict]) -> list[Difference]:
    """Code cells whose fresh outputs differ from the stored ones (cells never run are skipped)."""
    found = []
    for index, (old, new) in enumerate(zip(stored_cells, ran_cells)):
        if old.get("cell_type") != "code" or old.get("execution_count") is None:
            continue
        before, after = comparable(old.get("outputs") or []), comparable(new.get("outputs") or [])
        if before != after:
            found.append(Difference(index, str(old.get("id") or f"#{index}"), _first_gap(before, after),
                                    _first_gap(after, before), output_diff(before, after)))
    return found


DIFF_LINES, DIFF_LINE_CHARS = 40, 200


def output_diff(before: list[str], after: list[str]) -> str:
    """A unified diff of two cells' comparable outputs, one line per line of output, capped."""
    import difflib

    old = "\n".join(before).splitlines() or ["(no output)"]
    new = "\n".join(after).splitlines() or ["(no output)"]
    lines = [_cut(line) for line in difflib.unified_diff(old, new, "stored", "now", lineterm="", n=1)][2:]
    if len(lines) > DIFF_LINES:
        lines = lines[:DIFF_LINES] + [f"… {len(lines) - DIFF_LINES} more diff line(s)"]
    return "\n".join(lines)


def _cut(line: str) -> str:
    return line if len(line) <= DIFF_LINE_CHARS else line[: DIFF_LINE_CHARS - 1] + "…"


def _first_gap(a: list[str], b: list[str]) -> str:
    """The first output of ``a`` that ``b`` does not have at the same place (shortened), or "(nothing)"."""
    for i, text in enumerate(a):
        if i >= len(b) or b[i] != text:
            return _short(text)
    return "(nothing)"


def _short(text: str, limit: int = 160) -> str:
    return truncate(text.replace("\n", "⏎"), limit)


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)
