"""The records of attached context: a source's definition and its snapshot, and how text becomes a snapshot.

A source's output (a command's stdout, a push) is either plain text, or a JSON object with a string
``text`` and an optional ``summary``: a producer that knows better than the first line can say what
changed in one line.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from ..render.escape import strip_controls, truncate

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
KINDS = ("command", "push", "file", "variable", "kernel", "cell")
"""command: run by the poller; push: written by someone else; file: a watched file (the poller reads
it); variable: a kernel variable's summary (refreshed after each cell); kernel: the kernel's recent
history; cell: the output of a long-running cell."""
TEXT_MAX_BYTES = 256 * 1024
"""A snapshot's text is capped: the model reads it on demand, and a runaway source must not fill the DB."""
SUMMARY_MAX = 160


class SourceError(ValueError):
    """A source cannot be attached, pushed or found; the message says why."""


@dataclass(frozen=True)
class Source:
    """One attached source and its snapshot (a row of ``context_sources``)."""

    name: str
    kind: str
    scope: str = ""
    """"" for the workspace (every session sees it), else the id of the session it belongs to."""
    spec: str = ""
    """The command, the watched file's path, or the variable's name."""
    why: str = ""
    every: float | None = None
    wake: bool = False
    muted: bool = False
    created: float = 0.0
    snapshot: "Snapshot | None" = None
    trusted: bool = True
    """False for a command source whose command the user on this machine has not approved for this
    workspace (nbagent.workspace.trust): it is stored, shown and never run."""

    @property
    def status(self) -> str:
        """What a list or a chip shows: muted, needs approval, waiting (no text yet), failing or ok."""
        snap = self.snapshot
        if self.muted:
            return "muted"
        if not self.trusted:
            return "needs approval"
        if snap is not None and snap.error:
            return "failing"
        if snap is None or snap.text is None:
            return "waiting"
        return "ok"


@dataclass(frozen=True)
class Snapshot:
    text: str | None = None
    """The last good text (kept while the source fails)."""
    revision: str = ""
    """sha256 of the text."""
    serial: int = 0
    """How many different texts the source has had."""
    summary: str = ""
    error: str | None = None
    error_since: float | None = None
    fetched_at: float | None = None
    checked_at: float | None = None


@dataclass(frozen=True)
class Output:
    """A source's output, parsed: the text and its one-line summary."""

    text: str
    summary: str


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise SourceError(f"bad source name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
                          "starting with a letter or digit")
    return name


def revision_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def parse_output(raw: str) -> Output:
    """Plain text, or ``{"text": ..., "summary": ...}``; empty or oversized output is refused."""
    text, summary = raw, ""
    stripped = raw.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("text"), str):
            text = data["text"]
            summary = data.get("summary") if isinstance(data.get("summary"), str) else ""
    if not text.strip():
        raise SourceError("the source's output is empty")
    if len(text.encode("utf-8", "replace")) > TEXT_MAX_BYTES:
        raise SourceError(f"the source's output is over {TEXT_MAX_BYTES // 1024} KiB")
    return Output(text=text, summary=one_line(summary or first_line(text)))


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """One line without control characters (a summary is third-party text), at most ``limit`` characters."""
    return truncate(strip_controls(text, " "), limit, one_line=True)
