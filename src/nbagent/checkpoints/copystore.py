"""Snapshots outside a git repository: a content-addressed copy of the workspace's files.

Each file's bytes are stored once under ``checkpoints/copies/objects/`` in the
state directory (every folder there checked, never followed if a link) by
their SHA-256; a snapshot is a small JSON map (path -> mode, hash) named by
its own hash. A stat cache (size, mtime, inode) means an unchanged file is not
read again. The ignore rules are the workspace walker's (``.gitignore`` files
still apply); symbolic links and special files are not snapshotted.

The copy has a size cap (``checkpoint_max_bytes``): a workspace holding more
gets a clear error and no checkpoint, never a silent partial one.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path

from ..workspace.atomic import atomic_write
from ..workspace.safe_read import is_regular, read_bytes
from ..workspace.state_dir import CHECKPOINTS, StateDirRefused, private_dir, real_dirs
from ..workspace.tempfiles import SUFFIX as TEMP_SUFFIX
from .gitrepo import CheckpointError
from .model import EXECUTABLE, FILE, Change, Entry

# Writes here are atomic but not fsynced: a snapshot lost to a power cut is retaken by the next one,
# and an fsync per object would make the first checkpoint of a workspace cost one disk flush a file.
SWEEP_AGE = 3600.0
"""Seconds an unpinned snapshot is kept (a turn in flight has taken it but not pinned it yet)."""


class CopyStore:
    kind = "copy"

    def __init__(self, workspace_root: Path, state_dir: Path, max_bytes: int):
        self.root = workspace_root
        self.top = state_dir
        self.base = state_dir / CHECKPOINTS / "copies"
        self.objects = self.base / "objects"
        self.snapshots = self.base / "snapshots"
        self.pins = self.base / "pins"
        self.max_bytes = max_bytes
        for name in ("objects", "snapshots", "pins"):
            self._dir(name)
        self._stat_cache_path = self.base / "stat-cache.json"

    def _dir(self, *parts: str) -> Path:
        """A folder of the copy store, checked level by level from the state directory down each time
        it is used: a link planted there meanwhile is refused, never written or deleted through."""
        return private_dir(self.top, CHECKPOINTS, "copies", *parts)

    # ----- snapshots ---------------------------------------------------------------------
    def snapshot(self) -> str:
        from ..workspace.walker import is_jupyter_save_copy, list_files  # only needed outside a repository

        files = [f for f in list_files(self.root, ".") if not f.endswith(TEMP_SUFFIX) and not is_jupyter_save_copy(f)]
        cache = self._load_cache()
        stats = [(rel, self._stat(rel)) for rel in files]
        stats = [(rel, st) for rel, st in stats if st is not None]
        total = sum(st.st_size for _, st in stats)
        if total > self.max_bytes:
            raise CheckpointError(
                f"the workspace holds {total / 1e6:.1f} MB of files, above the checkpoint copy cap of "
                f"{self.max_bytes / 1e6:.1f} MB (checkpoint_max_bytes); no checkpoint was taken, so this "
                "turn cannot be undone. Make the workspace a git repository (git init) for checkpoints "
                "without a cap, or raise the cap.")
        tree: dict[str, list[str]] = {}
        new_cache: dict[str, list] = {}
        for rel, st in stats:
            key = [st.st_size, st.st_mtime_ns, st.st_ino]
            cached = cache.get(rel)
            digest = cached[3] if cached and cached[:3] == key else self._store(rel)
            if digest is None:
                continue  # vanished between the walk and the read
            mode = EXECUTABLE if st.st_mode & 0o111 else FILE
            tree[rel] = [mode, digest]
            new_cache[rel] = [*key, digest]
        self._save_cache(new_cache)
        data = json.dumps(tree, sort_keys=True, separators=(",", ":")).encode()
        snap = hashlib.sha256(data).hexdigest()
        path = self._dir("snapshots") / f"{snap}.json"
        if not is_regular(path):
            atomic_write(path, data, private=True, fsync=False)
        else:
            os.utime(path, follow_symlinks=False)
        return snap

    def _stat(self, rel: str) -> os.stat_result | None:
        try:
            st = os.lstat(self.root / rel)
        except OSError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def _store(self, rel: str) -> str | None:
        try:  # a FIFO swapped in since the walk is refused, not waited on
            data = read_bytes(self.root / rel, max_bytes=max(self.max_bytes, 1))[0]
        except OSError:
            return None
        digest = hashlib.sha256(data).hexdigest()
        target = self._dir("objects", digest[:2]) / digest[2:]
        if not is_regular(target):
            atomic_write(target, data, private=True, fsync=False)
        return digest

    def _load_cache(self) -> dict[str, list]:
        try:
            cache = json.loads(read_bytes(self._stat_cache_path)[0])
        except (OSError, ValueError):
            return {}
        return cache if isinstance(cache, dict) else {}

    def _save_cache(self, cache: dict[str, list]) -> None:
        self._dir()
        data = json.dumps(cache, separators=(",", ":")).encode()
        atomic_write(self._stat_cache_path, data, private=True, fsync=False)

    # ----- reading -----------------------------------------------------------------------
    def _tree(self, snap: str) -> dict[str, Entry]:
        try:
            data = json.loads(read_bytes(self._dir("snapshots") / f"{snap}.json")[0])
            return {path: Entry(mode, oid) for path, (mode, oid) in data.items()}
        except StateDirRefused:
            raise
        except (OSError, ValueError, TypeError, AttributeError):
            raise CheckpointError(f"the checkpoint snapshot {snap[:12]} is missing or damaged") from None

    def changes(self, old: str, new: str) -> dict[str, Change]:
        if old == new:
            return {}
        a, b = self._tree(old), self._tree(new)
        return {p: (a.get(p), b.get(p)) for p in sorted(a.keys() | b.keys()) if a.get(p) != b.get(p)}

    def read(self, entries: list[Entry]) -> dict[str, bytes]:
        blobs = {}
        for e in entries:
            try:
                blobs[e.oid] = read_bytes(self._dir("objects", e.oid[:2]) / e.oid[2:])[0]
            except OSError as exc:
                if isinstance(exc, StateDirRefused):
                    raise
                raise CheckpointError(f"the checkpoint's copy of object {e.oid[:12]} is missing") from None
        return blobs

    # ----- pinning -----------------------------------------------------------------------
    def _pin_path(self, ref: str) -> Path:
        *folders, name = ref.split("/")
        return self._dir("pins", *folders) / name

    def pin(self, ref: str, snapshot: str) -> None:
        atomic_write(self._pin_path(ref), snapshot.encode(), private=True, fsync=False)

    def unpin(self, ref: str) -> None:
        self._pin_path(ref).unlink(missing_ok=True)  # a link there is removed itself, never followed
        self.sweep()

    def unpin_all(self, session_id: str) -> None:
        session = self.pins / session_id
        if os.path.lexists(session):
            self._dir("pins", session_id)  # refuses a link or someone else's folder
            for folder, dirs, files in os.walk(session, topdown=False):  # os.walk never enters a link
                for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
                    os.unlink(os.path.join(folder, name))
                for name in dirs:
                    if not os.path.islink(os.path.join(folder, name)):
                        os.rmdir(os.path.join(folder, name))
            session.rmdir()
        self.sweep()

    def sweep(self) -> None:
        """Delete snapshots no pin holds (once old enough) and objects no snapshot holds."""
        pinned = set()
        for folder, _, files in os.walk(self._dir("pins")):  # never enters a link
            for name in files:
                try:
                    pinned.add(read_bytes(os.path.join(folder, name))[0].decode("utf-8", "replace").strip())
                except OSError:
                    continue
        now = time.time()
        snapshots = self._dir("snapshots")
        for snap in _regular_files(snapshots):
            if snap.suffix == ".json" and snap.stem not in pinned and now - snap.lstat().st_mtime > SWEEP_AGE:
                snap.unlink(missing_ok=True)
        used: set[str] = set()
        for snap in _regular_files(snapshots):
            if snap.suffix == ".json":
                used.update(oid for _, oid in self._tree(snap.stem).values())
        for folder in real_dirs(self._dir("objects")):
            for obj in _regular_files(folder):
                if obj.parent.name + obj.name not in used and now - obj.lstat().st_mtime > SWEEP_AGE:
                    obj.unlink(missing_ok=True)


def _regular_files(folder: Path) -> list[Path]:
    """The regular files directly in ``folder`` (links and anything else left alone)."""
    try:
        return [Path(e.path) for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
