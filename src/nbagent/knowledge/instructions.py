"""Instruction files: the user's and the project's standing orders, always in the system prompt.

The hierarchy, most general first: the user's global file (in platformdirs' config
dir for nbagent), then each directory from the workspace root down to the notebook's
(or the working) directory, where ``AGENTS.md``, ``CLAUDE.md``, ``NBAGENT.md`` and
``.nbagent/rules/*.md`` (in name order) are read. Each file becomes a layer marked
with its source. The whole is capped; a note names what was cut. Files are re-read
only when a file's mtime or size (or the set of files) changes, checked once per turn.

The workspace is hostile: a name that is a symlink leaving the workspace, a FIFO or a
directory is skipped, and a file is read only up to the cap (never whole when huge).
"""

from __future__ import annotations

import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import user_config_dir
from ..errors import ToolError
from ..workspace.root import confine, confined
from ..workspace.safe_read import read_bytes
from ..workspace.state_dir import RULES, STATE_DIR

FILE_NAMES = ("AGENTS.md", "CLAUDE.md", "NBAGENT.md")
RULES_DIR = (STATE_DIR, RULES)
"""Each directory's rules folder: project files the user writes, read where they are (not moved by
NBAGENT_STATE_DIR, which moves only what nbagent itself keeps)."""
FILE_CAP = 8_000
"""Characters of one file kept; a longer file is cut and the note says so."""
TOTAL_CAP = 16_000
"""Characters of all layers together; files past it are left out, and named."""
HEADER = ("Instructions from the user and the project (later layers are more specific and win "
          "where they disagree):")


@dataclass(frozen=True)
class InstructionFile:
    path: str
    """Absolute path of the file read."""
    source: str
    """How the prompt names it: "global: AGENTS.md" or its path relative to the workspace."""
    size: int
    """Bytes on disk."""
    included: int
    """Characters that went into the prompt (0 when cut entirely)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def candidate_paths(workspace: Path, start: Path | None, config_dir: Path) -> list[tuple[str, Path]]:
    """(source label, path) of every file that may hold instructions, in prompt order."""
    found = [(f"global: {name}", config_dir / name) for name in FILE_NAMES]
    found += [(f"global: rules/{p.name}", p) for p in _rules(config_dir / "rules")]
    for directory in _chain(workspace, start):
        rel = directory.relative_to(workspace).as_posix()
        prefix = "" if rel == "." else rel + "/"
        found += [(prefix + name, directory / name) for name in FILE_NAMES]
        found += [(prefix + "/".join(RULES_DIR) + "/" + p.name, p) for p in _rules(directory.joinpath(*RULES_DIR))]
    return found


def _chain(workspace: Path, start: Path | None) -> list[Path]:
    """The workspace root, then each directory down to ``start`` (only while inside the root)."""
    chain = [workspace]
    if start is None:
        return chain
    real = confined(workspace, start)
    if real is not None and real.suffix and not real.is_dir():  # a notebook: its directory
        real = real.parent
    if real is None or real == workspace:
        return chain
    start = real
    current = workspace
    for part in start.relative_to(workspace).parts:
        current = current / part
        chain.append(current)
    return chain


def _rules(directory: Path) -> list[Path]:
    try:
        names = sorted(e.name for e in os.scandir(directory) if e.name.endswith(".md"))
    except OSError:
        return []
    return [directory / name for name in names]


def _read_capped(path: Path, inside: Path | None, cap: int) -> tuple[str, int] | None:
    """(text up to ``cap`` characters, size in bytes), or None when it is not a regular file we may read
    (a link out of the workspace is not the project's instruction; a FIFO would block the read)."""
    try:
        real = confine(inside, path) if inside is not None else Path(os.path.realpath(path))
        data, info = read_bytes(real, max_bytes=cap * 4 + 4, part="head")
    except (OSError, ToolError):
        return None
    return data.decode("utf-8", errors="replace")[: cap + 1], info.st_size


def _signature(paths: list[tuple[str, Path]]) -> tuple:
    """(path, mtime, size) of each candidate that exists: what ``_build`` reads, and what says it changed."""
    sig = []
    for _, path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        sig.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(sig)


class Instructions:
    """The instruction layers of one agent; ``block()`` is cached until a file changes."""

    def __init__(self, workspace: str | os.PathLike[str], start: str | os.PathLike[str] | None = None, *,
                 config_dir: Path | None = None, file_cap: int = FILE_CAP, total_cap: int = TOTAL_CAP):
        self.workspace = Path(os.path.realpath(workspace))
        self.start = Path(start) if start not in (None, "", ".") else None
        self.config_dir = config_dir
        self.file_cap, self.total_cap = file_cap, total_cap
        self._lock = threading.Lock()
        self._signature: tuple | None = None
        self._block = ""
        self._files: list[InstructionFile] = []
        self.reads = 0
        """How many times the files were actually read (tests check the mtime cache with it)."""

    def refresh(self) -> bool:
        """Re-read the files if any changed since the last read; True when the block changed."""
        paths = candidate_paths(self.workspace, self.start, self.config_dir or user_config_dir())
        signature = _signature(paths)
        with self._lock:
            if signature == self._signature:
                return False
            old = self._block
            present = {entry[0] for entry in signature}  # only these are worth resolving and reading
            self._block, self._files = self._build([p for p in paths if str(p[1]) in present])
            self._signature = signature
            self.reads += 1
            return self._block != old

    def block(self) -> str:
        if self._signature is None:
            self.refresh()
        return self._block

    def files(self) -> list[InstructionFile]:
        """The files loaded, in prompt order, with their sizes (a fresh check of mtimes first)."""
        self.refresh()
        return list(self._files)

    def _build(self, paths: list[tuple[str, Path]]) -> tuple[str, list[InstructionFile]]:
        layers: list[str] = []
        files: list[InstructionFile] = []
        cut: list[str] = []
        room = self.total_cap
        for source, path in paths:
            inside = None if source.startswith("global:") else self.workspace
            read = _read_capped(path, inside, self.file_cap)
            if read is None:
                continue
            text, size = read
            text = text.strip()
            if len(text) > self.file_cap:
                text = text[: self.file_cap]
                cut.append(f"{source} (cut at {self.file_cap} characters)")
            if len(text) > room:
                cut.append(f"{source} (left out: the {self.total_cap}-character cap was reached)"
                           if room < 200 else f"{source} (cut at {room} characters: the total cap)")
                text = text[:room] if room >= 200 else ""
            room -= len(text)
            files.append(InstructionFile(str(path), source, size, len(text)))
            if text:
                layers.append(f"## From {source}\n{text}")
        if not layers:
            return "", files
        if cut:
            layers.append("(Instruction files were cut to fit: " + "; ".join(cut) + ".)")
        return "\n\n".join([HEADER, *layers]), files
