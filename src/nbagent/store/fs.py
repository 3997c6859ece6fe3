"""Where the session database may live: network filesystems, and a configured local state directory.

SQLite's WAL mode needs shared memory between the processes using a database, which network
filesystems (NFS, SMB, sshfs, ...) do not give: there WAL can corrupt the file. Home directories
on a JupyterHub are often NFS, so the database uses a rollback journal on a network filesystem,
and ``NBAGENT_STATE_DIR`` can move it to a local disk instead (where WAL is used again).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import psutil

from ..workspace.state_dir import STATE_DIR_ENV

NETWORK_FS = frozenset({
    "nfs", "nfs4", "cifs", "smbfs", "smb3", "ncpfs", "afs", "9p", "fuse.sshfs", "sshfs", "lustre", "gpfs",
    "ceph", "fuse.ceph", "glusterfs", "fuse.glusterfs", "beegfs", "fuse.s3fs", "fuse.gcsfuse", "davfs",
    "fuse.rclone", "orangefs", "pvfs2", "ocfs2",
})
_log = logging.getLogger("nbagent")
_told: set[str] = set()


MOUNTS_TTL = 5.0
"""Seconds the mount table is reused: every database opened reads it, and a batch opens hundreds."""
_mounts: tuple[float, list[tuple[str, str]]] = (-MOUNTS_TTL, [])
_mounts_lock = threading.Lock()


def _mount_table() -> list[tuple[str, str]]:
    global _mounts
    with _mounts_lock:
        read_at, table = _mounts
        if time.monotonic() - read_at >= MOUNTS_TTL:
            table = [(p.mountpoint, p.fstype) for p in psutil.disk_partitions(all=True)]
            _mounts = (time.monotonic(), table)
        return table


def filesystem_type(path: Path) -> str:
    """The type of the filesystem holding ``path`` ("" when unknown), from the mount table."""
    real = os.path.realpath(path)
    best, fstype = "", ""
    for mountpoint, part_fstype in _mount_table():
        mount = mountpoint.rstrip("/") or "/"
        inside = real == mount or real.startswith(mount + "/") or mount == "/"
        if inside and len(mount) > len(best):
            best, fstype = mount, part_fstype
    return fstype.lower()


def is_network_filesystem(path: Path) -> bool:
    return filesystem_type(path) in NETWORK_FS


def journal_mode(db_path: Path) -> str:
    """ "WAL" on a local disk; "DELETE" (a rollback journal) on a network filesystem, said once."""
    fstype = filesystem_type(db_path.parent)
    if fstype not in NETWORK_FS:
        return "WAL"
    key = str(db_path.parent)
    if key not in _told:
        _told.add(key)
        _log.warning(
            "nbagent: %s is on a network filesystem (%s), where SQLite's WAL is unsafe; the session "
            "database uses a rollback journal there (slower when several kernels write at once). Set %s "
            "to a local directory to keep it on a local disk.", db_path.parent, fstype, STATE_DIR_ENV)
    return "DELETE"
