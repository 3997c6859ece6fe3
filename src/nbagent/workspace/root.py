"""The workspace: the one directory the tools may touch, and the ignore-aware view of it.

Every path a tool is given goes through ``Workspace.resolve``: relative to the
root (an absolute path inside it is accepted), symbolic links followed, and
anything that lands outside refused with an error naming the root. The
state directory (nbagent.workspace.state_dir) is readable (saved outputs are paged from there)
but never writable by the file tools.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Iterator

from ..errors import ToolError
from .picker import Picker
from .state_dir import STATE_DIR, is_state_path, location, state_dir, usable_state_dir
from .walker import ALWAYS_SKIPPED, list_files

__all__ = ["STATE_DIR", "Workspace", "confine"]
FILES_TTL = 30.0
"""Seconds the @ picker's file list is reused before the next call walks again."""


class Workspace:
    def __init__(self, root: str | os.PathLike[str], *, engine: str = "auto", files_ttl: float = FILES_TTL):
        self.root = Path(os.path.realpath(Path(root).expanduser()))
        if not self.root.is_dir():
            raise ToolError(f"workspace {self.root} is not a directory")
        self.engine = engine
        """"auto" (ripgrep when installed), "rg" or "pathspec": see nbagent.workspace.walker."""
        self.files_ttl = files_ttl
        self._files: list[str] | None = None
        self._picker: Picker | None = None
        self._files_at = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # --- paths -----------------------------------------------------------------

    def resolve(self, path: str | os.PathLike[str], *, write: bool = False) -> Path:
        """The real path ``path`` names, refusing anything outside the root (and writes to the state directory)."""
        real = confine(self.root, path, also=() if write else (location(self.root),))
        if write and is_state_path(self.root, real):
            raise ToolError(
                f"{os.fspath(path).strip()} is in nbagent's own state directory for the workspace {self.root}: "
                "the file tools may read it but never write there"
            )
        return real

    def rel(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the root, with forward slashes ("." for the root itself)."""
        p = Path(path)
        if not p.is_absolute():
            p = self.root / p
        try:
            rel = Path(os.path.normpath(p)).relative_to(self.root)
        except ValueError:
            raise ToolError(f"{path} is outside the workspace {self.root}") from None
        return rel.as_posix()

    @property
    def state_dir(self) -> Path:
        """The workspace's state directory (nbagent.workspace.state_dir), made and checked on first use."""
        return state_dir(self.root)

    def state_subdir(self, name: str) -> Path | None:
        """The folder ``name`` in the state directory, made on first use, or None when the state
        directory cannot be used (read-only workspace, a link or someone else's folder in its
        place): callers then keep things in memory."""
        return usable_state_dir(self.root, name)

    # --- walking ---------------------------------------------------------------

    def walk(self, start: str = ".", max_depth: int | None = None) -> Iterator[tuple[str, bool]]:
        """(path relative to the root, is_dir) for what the ignore rules keep under ``start``.

        Directories are those holding at least one listed file (git's view: an
        empty or wholly ignored directory does not appear); each comes before
        its contents. ``max_depth`` counts levels below ``start`` (1 = its children).
        """
        real = self.resolve(start)
        rel = self.rel(real)
        if any(part in ALWAYS_SKIPPED for part in rel.split("/")):
            return
        if real.is_file():
            yield rel, False
            return
        if not real.is_dir():
            raise ToolError(f"{start} does not exist in the workspace {self.root}")
        files = list_files(self.root, rel, self.engine)
        yield from _with_dirs(files, rel, max_depth)

    def files(self, refresh: bool = False) -> list[str]:
        """Every file of the workspace (the @ picker's list), walked on first use and cached."""
        with self._lock:
            stale = time.monotonic() - self._files_at > self.files_ttl
            if self._files is None or refresh or stale:
                self._files = sorted(list_files(self.root, ".", self.engine))
                self._files_at = time.monotonic()
            return self._files

    def invalidate(self) -> None:
        """Forget the cached file list (a tool created or removed a file)."""
        with self._lock:
            self._files = None

    def pick(self, query: str, limit: int = 20) -> list[str]:
        """Files matching ``query`` for the @ picker, best first.

        A match at the start of the path ranks first (so "src/" means "under
        src/"), then one at the start of the file name, then one anywhere, then
        the query's characters in order; within a rank, closer to the root and
        shorter paths first. Each keystroke narrows the previous one's matches
        (nbagent.workspace.picker).
        """
        files = self.files()
        with self._lock:
            if self._picker is None or self._picker.files is not files:
                self._picker = Picker(files)
            picker = self._picker
        return picker.pick(query, limit)


def confine(root: Path, path: str | os.PathLike[str], *, also: tuple[Path, ...] = ()) -> Path:
    """The one confinement: the real path ``path`` names (relative to ``root``, or absolute), links
    followed, refused with a ToolError naming the root when it lands outside ``root`` (and ``also``)."""
    raw = os.fspath(path).strip() or "."
    if "\0" in raw:
        raise ToolError(f"path {raw!r} contains a NUL byte")
    given = Path(raw).expanduser()
    real = Path(os.path.realpath(given if given.is_absolute() else root / given))
    if real.is_relative_to(root) or any(real.is_relative_to(folder) for folder in also):
        return real
    lexical = Path(os.path.normpath(given if given.is_absolute() else root / given))
    how = " through a symbolic link" if lexical.is_relative_to(root) else ""
    raise ToolError(f"{raw} resolves{how} to {real}, outside the workspace {root}: "
                    "every path must stay inside the workspace root")


def confined(root: Path, path: str | os.PathLike[str]) -> Path | None:
    """``confine``'s answer as a value: the real path ``path`` names if it stays inside ``root``, else
    None (for code that skips what lies outside rather than refusing it)."""
    try:
        return confine(root, path)
    except ToolError:
        return None


def _with_dirs(files: list[str], start: str, max_depth: int | None) -> Iterator[tuple[str, bool]]:
    """Interleave each file's not-yet-seen parent directories (below ``start``) before it."""
    seen = {"", start}
    last_parent = None
    base_depth = 0 if start == "." else start.count("/") + 1
    for f in files:
        parent = f.rpartition("/")[0]
        if parent != last_parent:  # rg lists a directory's files together: one check per directory
            last_parent = parent
            missing = []
            while parent not in seen:
                seen.add(parent)
                missing.append(parent)
                parent = parent.rpartition("/")[0]
            for d in reversed(missing):
                if max_depth is None or d.count("/") + 1 - base_depth <= max_depth:
                    yield d, True
        if max_depth is None or f.count("/") + 1 - base_depth <= max_depth:
            yield f, False
