"""Snapshots of a workspace inside a git repository: trees written through the private index.

``git add -A`` into nbagent's private index rehashes only files whose stat
data changed since the last snapshot, then ``git write-tree`` reuses every
unchanged subtree: a snapshot costs what changed, not the size of the tree.
The first snapshot in a workspace hashes every file once: the user's index
cannot seed ours, because its blobs went through the repository's filters and
line-ending conversions (an LFS pointer, a CRLF file stored with LF), and a
checkpoint must hold the exact bytes.
Ignored files stay out, untracked ones that are not ignored go in.
"""

from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .gitrepo import CheckpointError, GitRepo, write_if_changed as _write_text
from ..workspace.state_dir import STATE_DIR, open_lock_file
from ..workspace.tempfiles import SUFFIX as TEMP_SUFFIX
from ..workspace.walker import JUPYTER_SAVE_PREFIX, JUPYTER_STATE
from .model import Change, Entry

GITLINK = "160000"


class GitStore:
    kind = "git"

    def __init__(self, repo: GitRepo, workspace_root: Path):
        self.repo = repo
        rel = workspace_root.relative_to(repo.top).as_posix()
        self.prefix = "" if rel == "." else rel + "/"
        # nbagent's own state never goes in a snapshot. Through the private info/exclude, not an
        # exclude pathspec: git add refuses a pathspec naming a path the user's .gitignore ignores.
        # Nor do the temporary files of an atomic write cut by a kill (nbagent.workspace.tempfiles sweeps them).
        # Jupyter's own state (a collaboration database, its save checkpoints, the copy a save is
        # writing) is never restored either.
        jupyter = "".join(f"{name}\n" for name in JUPYTER_STATE) + f"{JUPYTER_SAVE_PREFIX}*\n"
        _write_text(repo.private / "info" / "exclude", f"/{self.prefix}{STATE_DIR}/\n*{TEMP_SUFFIX}\n{jupyter}")

    # ----- snapshots ---------------------------------------------------------------------
    def snapshot(self) -> str:
        """The id (a tree) of the workspace's current state."""
        with self._locked():
            # Only nbagent uses the private index and we hold its lock: an index.lock here was left
            # by a process killed mid-snapshot, and would refuse every snapshot from now on.
            (self.repo.private / "index.lock").unlink(missing_ok=True)
            scope = f":(top){self.prefix}" if self.prefix else ":(top)"
            self.repo.run("add", "-A", "--ignore-errors", "--", scope)
            return self.repo.run("write-tree").decode().strip()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # Two agents on one workspace share the private index: one snapshot at a time.
        with open_lock_file(self.repo.private / "snapshot.lock") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    # ----- reading -----------------------------------------------------------------------
    def changes(self, old: str, new: str) -> dict[str, Change]:
        """Workspace-relative path -> (entry in ``old``, entry in ``new``) for every path that differs."""
        if old == new:
            return {}
        args = ["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", old, new]
        if self.prefix:
            args += ["--", f":(top){self.prefix}"]
        out = self.repo.run(*args).split(b"\0")
        result: dict[str, Change] = {}
        for i in range(0, len(out) - 1, 2):
            meta = out[i].decode().lstrip(":").split()
            path = out[i + 1].decode("utf-8", "surrogateescape")
            old_mode, new_mode, old_oid, new_oid = meta[0], meta[1], meta[2], meta[3]
            before = None if old_mode == "000000" else Entry(old_mode, old_oid)
            after = None if new_mode == "000000" else Entry(new_mode, new_oid)
            result[path[len(self.prefix):]] = (before, after)
        return result

    def read(self, entries: list[Entry]) -> dict[str, bytes]:
        """Blob id -> bytes, through one ``git cat-file --batch`` (raw blobs, no filter)."""
        oids = sorted({e.oid for e in entries if e.mode != GITLINK})
        if not oids:
            return {}
        out = self.repo.run("cat-file", "--batch", stdin=("\n".join(oids) + "\n").encode())
        blobs: dict[str, bytes] = {}
        pos = 0
        for oid in oids:
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split()
            if len(header) != 3:
                raise CheckpointError(f"the checkpoint's object {oid} is missing from the repository")
            size = int(header[2])
            blobs[oid] = out[end + 1:end + 1 + size]
            pos = end + 1 + size + 1
        return blobs

    # ----- pinning -----------------------------------------------------------------------
    def pin(self, ref: str, snapshot: str) -> None:
        """Keep ``snapshot`` alive (``git gc`` keeps what a ref points at) under refs/nbagent/."""
        self.repo.run("update-ref", "--no-deref", f"refs/nbagent/{ref}", snapshot, user_repo=True)

    def unpin(self, ref: str) -> None:
        try:
            self.repo.run("update-ref", "--no-deref", "-d", f"refs/nbagent/{ref}", user_repo=True)
        except CheckpointError:
            pass  # already gone: nothing to keep alive

    def unpin_all(self, session_id: str) -> None:
        out = self.repo.run("for-each-ref", "--format=%(refname)", f"refs/nbagent/{session_id}/",
                            user_repo=True)
        lines = "".join(f"delete {ref}\n" for ref in out.decode().split())
        if lines:
            self.repo.run("update-ref", "--stdin", stdin=lines.encode(), user_repo=True)

    def release(self, snapshot: str) -> None:
        """Nothing to do: the objects stay in the repository until its own gc drops them."""
