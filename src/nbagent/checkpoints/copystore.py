"""Snapshots outside a git repository: a content-addressed copy of the workspace's files.

Each file's bytes are stored once under ``.nbagent/checkpoints/objects/`` by
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
import time
from pathlib import Path

from ..workspace.tempfiles import SUFFIX as TEMP_SUFFIX
from .gitrepo import CheckpointError
from .model import EXECUTABLE, FILE, Change, Entry

SWEEP_AGE = 3600.0
"""Seconds an unpinned snapshot is kept (a turn in flight has taken it but not pinned it yet)."""


class CopyStore:
    kind = "copy"

    def __init__(self, workspace_root: Path, state_dir: Path, max_bytes: int):
        self.root = workspace_root
        self.base = state_dir / "checkpoints" / "copies"
        self.objects = self.base / "objects"
        self.snapshots = self.base / "snapshots"
        self.pins = self.base / "pins"
        self.max_bytes = max_bytes
        for d in (self.objects, self.snapshots, self.pins):
            d.mkdir(parents=True, exist_ok=True)
        self._stat_cache_path = self.base / "stat-cache.json"

    # ----- snapshots ---------------------------------------------------------------------
    def snapshot(self) -> str:
        from ..workspace.walker import list_files  # pathspec/ripgrep: only needed outside a repository

        files = [f for f in list_files(self.root, ".") if not f.endswith(TEMP_SUFFIX)]
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
        path = self.snapshots / f"{snap}.json"
        if not path.exists():
            _write_atomic(path, data)
        else:
            os.utime(path)
        return snap

    def _stat(self, rel: str) -> os.stat_result | None:
        try:
            st = os.lstat(self.root / rel)
        except OSError:
            return None
        import stat as stat_mod

        return st if stat_mod.S_ISREG(st.st_mode) else None

    def _store(self, rel: str) -> str | None:
        try:
            data = (self.root / rel).read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(data).hexdigest()
        target = self.objects / digest[:2] / digest[2:]
        if not target.exists():
            target.parent.mkdir(exist_ok=True)
            _write_atomic(target, data)
        return digest

    def _load_cache(self) -> dict[str, list]:
        try:
            return json.loads(self._stat_cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def _save_cache(self, cache: dict[str, list]) -> None:
        _write_atomic(self._stat_cache_path, json.dumps(cache, separators=(",", ":")).encode())

    # ----- reading -----------------------------------------------------------------------
    def _tree(self, snap: str) -> dict[str, Entry]:
        try:
            data = json.loads((self.snapshots / f"{snap}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise CheckpointError(f"the checkpoint snapshot {snap[:12]} is missing or damaged") from None
        return {path: Entry(mode, oid) for path, (mode, oid) in data.items()}

    def changes(self, old: str, new: str) -> dict[str, Change]:
        if old == new:
            return {}
        a, b = self._tree(old), self._tree(new)
        return {p: (a.get(p), b.get(p)) for p in sorted(a.keys() | b.keys()) if a.get(p) != b.get(p)}

    def read(self, entries: list[Entry]) -> dict[str, bytes]:
        blobs = {}
        for e in entries:
            try:
                blobs[e.oid] = (self.objects / e.oid[:2] / e.oid[2:]).read_bytes()
            except OSError:
                raise CheckpointError(f"the checkpoint's copy of object {e.oid[:12]} is missing") from None
        return blobs

    # ----- pinning -----------------------------------------------------------------------
    def pin(self, ref: str, snapshot: str) -> None:
        path = self.pins / ref
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, snapshot.encode())

    def unpin(self, ref: str) -> None:
        (self.pins / ref).unlink(missing_ok=True)
        self.sweep()

    def unpin_all(self, session_id: str) -> None:
        session = self.pins / session_id
        if session.is_dir():
            for p in sorted(session.rglob("*"), reverse=True):
                p.unlink() if p.is_file() else p.rmdir()
            session.rmdir()
        self.sweep()

    def sweep(self) -> None:
        """Delete snapshots no pin holds (once old enough) and objects no snapshot holds."""
        pinned = {p.read_text(encoding="utf-8").strip() for p in self.pins.rglob("*") if p.is_file()}
        now = time.time()
        for snap in self.snapshots.glob("*.json"):
            if snap.stem not in pinned and now - snap.stat().st_mtime > SWEEP_AGE:
                snap.unlink(missing_ok=True)
        used: set[str] = set()
        for snap in self.snapshots.glob("*.json"):
            used.update(oid for _, oid in self._tree(snap.stem).values())
        for obj in self.objects.glob("*/*"):
            if obj.parent.name + obj.name not in used and now - obj.stat().st_mtime > SWEEP_AGE:
                obj.unlink(missing_ok=True)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
