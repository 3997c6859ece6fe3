"""Output limits: a tool output over the limit keeps its head and tail, and the whole is saved.

The model sees where a long output starts (the command, the headers) and how it
ends (the error, the summary), with one gap line between saying how much was
cut and which file holds all of it: a file under .nbagent/outputs/ that
read_file pages like any other.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path
from typing import Callable, TYPE_CHECKING

from ..render.redaction import redact
from ..workspace.state_dir import OUTPUTS, STATE_DIR, write_private


if TYPE_CHECKING:
    from .context import ToolContext

DEFAULT_LIMIT = 30_000
KEEP_SAVED = 200
"""Saved outputs kept per workspace; older ones are removed when a new one is saved."""


def limit_output(
    text: str,
    limit: int = DEFAULT_LIMIT,
    save_dir: str | os.PathLike[str] | Callable[[], str | os.PathLike[str] | None] | None = None,
    name: str = "output",
    *,
    shown_root: str | os.PathLike[str] | None = None,
) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail around a gap line.

    With ``save_dir`` (or a function giving it, called only for an output that is cut) the whole
    text is written there first and the gap line
    names the file relative to ``shown_root`` (by default the directory holding
    the ``.nbagent`` the file is in: the workspace root), so the model can pass
    it straight to read_file. Registered secrets are redacted first (nbagent.render.redaction).
    """
    text = redact(text)
    if len(text) <= limit:
        return text
    where = "the whole output was not saved"
    if callable(save_dir):
        save_dir = save_dir()
    if save_dir is not None:
        try:
            saved = _save(text, Path(save_dir), name)
        except OSError as exc:  # a full disk or a read-only workspace: the cut output still goes back
            where = f"the whole output could not be saved ({exc.strerror or exc})"
        else:
            shown_root = shown_root or _workspace_of(saved)
            shown = Path(os.path.relpath(saved, shown_root)).as_posix() if shown_root else str(saved)
            where = f"the whole output is in {shown} (page it with read_file offset/limit)"
    # Two passes: the gap line's length depends on the counts it reports.
    gap = _gap_line(text, "", "", where)
    head = tail = ""
    for _ in range(2):
        head, tail = _head_and_tail(text, max(limit - len(gap) - 16, 0))
        gap = _gap_line(text, head, tail, where)
    return head + gap + tail


def _head_and_tail(text: str, budget: int) -> tuple[str, str]:
    """Two fifths of the budget for the head, the rest for the tail (errors and summaries end outputs)."""
    head = _cut_at_line_end(text[: budget * 2 // 5])
    rest = budget - len(head)
    tail = _cut_at_line_start(text[len(text) - rest:]) if rest > 0 else ""
    return head, tail


def _gap_line(text: str, head: str, tail: str, where: str) -> str:
    """Say how much was cut and which lines, so the model can page straight to them."""
    end = len(text) - len(tail)
    first = head.count("\n") + 1
    last = text.count("\n", 0, end) + (0 if text[end - 1: end] == "\n" else 1)
    return (
        f"\n[... {end - len(head):,} characters cut from the middle (lines {first:,}-{last:,} of "
        f"{_line_count(text):,}); {where} ...]\n"
    )


def _workspace_of(saved: Path) -> Path | None:
    for parent in saved.parents:
        if parent.name == STATE_DIR:
            return parent.parent
    return None


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def limit_tool_output(ctx: "ToolContext", text: str, name: str = "output") -> str:
    """``limit_output`` with the context's limit, saving under the workspace's .nbagent/outputs/."""
    limit = getattr(ctx.config, "output_limit", DEFAULT_LIMIT)
    if len(text) <= limit:
        return text
    return limit_output(text, limit, ctx.workspace.state_subdir(OUTPUTS), name, shown_root=ctx.workspace.root)


def _cut_at_line_end(head: str) -> str:
    """Drop a partial last line when a line break falls in the head's second half."""
    nl = head.rfind("\n")
    return head[: nl + 1] if nl >= len(head) // 2 else head


def _cut_at_line_start(tail: str) -> str:
    """Drop a partial first line when a line break falls in the tail's first half."""
    nl = tail.find("\n")
    return tail[nl + 1:] if 0 <= nl < len(tail) // 2 else tail


def _save(text: str, out_dir: Path, name: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40] or "output"
    # Nanoseconds, not nbagent.ids (milliseconds): outputs saved in the same
    # millisecond must still prune oldest first.
    path = out_dir / f"{safe}-{time.time_ns()}{secrets.token_hex(2)}.txt"
    write_private(path, text.encode("utf-8", errors="backslashreplace"))
    _prune(out_dir)
    return path


SAVED_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}-(\d{19,}[0-9a-f]{4})\.txt")
"""The names ``_save`` gives: pruning never touches any other file."""


def _prune(out_dir: Path) -> None:
    """Keep the newest KEEP_SAVED outputs (the name's last part starts with the time it was saved)."""
    saved = [(m.group(1), p) for p in out_dir.iterdir() if (m := SAVED_NAME.fullmatch(p.name))]
    by_age = [p for _, p in sorted(saved)]
    for old in by_age[: max(len(by_age) - KEEP_SAVED, 0)]:
        old.unlink(missing_ok=True)
