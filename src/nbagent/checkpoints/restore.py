"""Writing a snapshot's version of some paths back into the workspace, and nothing else.

Only the paths given are touched: a file the snapshot lacks is deleted (and
directories it leaves empty), a file it holds is written with its exact bytes
and mode (through a temporary file and a rename), a symbolic link is
recreated as a link. Every path is checked to stay inside the workspace, and
a link standing where a file goes is replaced, never written through.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from typing import Callable

from ..errors import ToolError
from ..workspace.root import confine, confined
from ..workspace.atomic import atomic_symlink, replace_with, write_temp
from .gitrepo import CheckpointError
from .model import EXECUTABLE, SYMLINK, Entry

LiveWriter = Callable[[str, Path, bytes, bool], bool]
"""``live(rel, path, data, exists)``: restore an open notebook through the store that holds it open
(``exists``: the file is there now); False: write the file."""

GITLINK = "160000"


def apply(root: Path, targets: dict[str, Entry | None], blobs: dict[str, bytes],
          live: LiveWriter | None = None) -> list[str]:
    """Make each path in ``targets`` what its entry says (None: absent). Returns the paths changed."""
    # Every path is checked before any is touched: a refused restore changes nothing.
    removed = {root / rel for rel, entry in targets.items() if entry is None}
    paths = {rel: _checked(root, rel, entry, removed) for rel, entry in sorted(targets.items())
             if entry is None or entry.mode != GITLINK}  # a nested repository is not ours to restore
    changed = []
    for rel, path in paths.items():
        entry = targets[rel]
        if entry is None:
            if _remove(path, root):
                changed.append(rel)
        else:
            _restore_file(root, rel, path, entry, blobs[entry.oid], live)
            changed.append(rel)
    return changed


def _restore_file(root: Path, rel: str, path: Path, entry: Entry, data: bytes, live: LiveWriter | None) -> None:
    if live and rel.endswith(".ipynb") and entry.mode != SYMLINK and live(rel, path, data, path.is_file()):
        return  # an open notebook took the cells and saves the file itself
    _write(path, entry, data, root)


def _checked(root: Path, rel: str, entry: Entry | None, removed: set[Path]) -> Path:
    """Where ``rel`` is restored, refusing what ``apply`` would refuse halfway: a path leading out of
    the workspace, a directory standing where a file goes, a parent that is not a folder inside."""
    path = _inside(root, rel)
    if os.path.isdir(path) and not os.path.islink(path):
        raise CheckpointError(f"cannot restore {path}: a directory now stands where a file was; nothing "
                              "was restored")
    if entry is not None:
        _existing_parent(path.parent, root, removed)
    return path


def _existing_parent(directory: Path, root: Path, removed: frozenset[Path] | set[Path] = frozenset()) -> Path:
    """The nearest existing ancestor of ``directory`` (a file the restore removes first does not
    count), which must be a real folder inside ``root``."""
    while not os.path.lexists(directory) or directory in removed:
        directory = directory.parent
    if not directory.is_dir() or confined(root, directory) is None:
        raise CheckpointError(f"cannot restore under {directory}: not a directory inside the workspace; "
                              "nothing was restored")
    return directory


def _inside(root: Path, rel: str) -> Path:
    if not rel or rel.startswith("/") or any(part in ("", ".", "..") for part in rel.split("/")):
        raise CheckpointError(f"refusing to restore the path {rel!r}: not a plain relative path")
    name = rel.rpartition("/")[2]
    try:  # the folder through the one confinement; the name itself is never followed (a link is replaced)
        return confine(root, rel.rpartition("/")[0] or ".") / name
    except ToolError as exc:
        raise CheckpointError(f"refusing to restore {rel}: {exc}; nothing was restored") from None


def _remove(path: Path, root: Path) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        raise CheckpointError(f"cannot restore {path}: a directory now stands where a file was")
    path.unlink()
    _prune_empty_dirs(path.parent, root)
    return True


def _prune_empty_dirs(directory: Path, root: Path) -> None:
    while directory != root and directory.is_relative_to(root):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _write(path: Path, entry: Entry, data: bytes, root: Path) -> None:
    _make_parents(path.parent, root)
    if os.path.lexists(path) and (os.path.islink(path) or not path.is_file()):
        if path.is_dir() and not path.is_symlink():
            raise CheckpointError(f"cannot restore {path}: a directory now stands where a file was")
        path.unlink()
    if entry.mode == SYMLINK:
        atomic_symlink(path, os.fsdecode(data))
        return
    tmp = write_temp(path, data, mode=0o777 if entry.mode == EXECUTABLE else 0o666, fsync=False)
    try:
        _set_mode(tmp, entry.mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    replace_with(path, tmp)


def _set_mode(path: Path, mode: str) -> None:
    # Keep the umask's read/write bits; only the executable bit is part of a snapshot.
    current = os.stat(path).st_mode & 0o777
    if mode == EXECUTABLE:
        os.chmod(path, current | ((current & 0o444) >> 2))
    else:
        os.chmod(path, current & ~0o111)


def _make_parents(directory: Path, root: Path) -> None:
    if directory.is_dir():
        return
    missing = []
    while not os.path.lexists(directory):
        missing.append(directory)
        directory = directory.parent
    _existing_parent(directory, root)
    for d in reversed(missing):
        d.mkdir()
