"""Benchmark data on this machine: downloaded once at a pinned revision, checked against its checksum, cached.

Nothing is fetched unless a benchmark is run without a local copy (``--data``). The cache is
``$NBAGENT_BENCHMARKS`` or the user cache directory's ``benchmarks/`` folder; a file or folder is
used only when its checksum is the pinned one, so a changed upstream, a broken download or an
edited copy is refused with both digests named, never measured as if it were the benchmark.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from ...errors import ConfigError

CACHE_ENV = "NBAGENT_BENCHMARKS"
DOWNLOAD_TIMEOUT = 300.0


def cache_root() -> Path:
    where = os.environ.get(CACHE_ENV)
    if where:
        return Path(where).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("nbagent")) / "benchmarks"


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def git_tree_id(folder: Path) -> str:
    """The id git gives ``folder`` as a tree (what ``git rev-parse COMMIT:path`` prints): a release of
    a repository is pinned by its commit's content, however the archive was packed or compressed."""
    entries = []
    for child in folder.iterdir():
        if child.is_symlink():
            raise ConfigError(f"{child} is a link: a pinned release holds none")
        if child.is_dir():
            entries.append((child.name + "/", b"40000 " + child.name.encode(), bytes.fromhex(git_tree_id(child))))
        else:
            mode = b"100755 " if os.access(child, os.X_OK) else b"100644 "
            entries.append((child.name, mode + child.name.encode(), _git_object(b"blob", child.read_bytes())))
    body = b"".join(head + b"\0" + oid for _, head, oid in sorted(entries))  # git sorts a folder as "name/"
    return _git_object(b"tree", body).hex()


def _git_object(kind: bytes, data: bytes) -> bytes:
    return hashlib.sha1(kind + b" %d\0" % len(data) + data).digest()


def download(url: str, dest: Path, sha256: str | None = None) -> Path:
    """``url`` saved as ``dest`` (kept when it is already there with the right checksum); refused
    when its sha256 is not ``sha256``."""
    if dest.is_file() and (sha256 is None or file_digest(dest) == sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest.parent, prefix=".part-", delete=False) as part:
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as response:
                shutil.copyfileobj(response, part)
        except OSError as exc:
            Path(part.name).unlink(missing_ok=True)
            raise ConfigError(f"cannot download {url}: {exc} (give a local copy with --data instead)") from None
    got = file_digest(Path(part.name))
    if sha256 is not None and got != sha256:
        Path(part.name).unlink(missing_ok=True)
        raise ConfigError(f"{url} does not have the pinned checksum: sha256 {got}, expected {sha256}")
    os.replace(part.name, dest)
    return dest


def fetch_tree(url: str, dest: Path, member: str, tree_id: str) -> Path:
    """The folder ``member`` of the tar archive at ``url`` (a release of a repository), unpacked into
    ``dest`` and checked against its git tree id; reused when ``dest`` already holds it."""
    if dest.is_dir() and git_tree_id(dest) == tree_id:
        return dest
    with tempfile.TemporaryDirectory(prefix="nbagent-fetch-") as tmp:
        archive = download(url, Path(tmp) / "release.tar.gz")
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")  # no links out, no devices, no absolute paths
        found = [p for p in unpacked.glob(f"*/{member}") if p.is_dir()] or [unpacked / member]
        if not found[0].is_dir():
            raise ConfigError(f"{url} holds no {member}/ folder")
        got = git_tree_id(found[0])
        if got != tree_id:
            raise ConfigError(f"{member}/ of {url} is not the pinned release: git tree {got}, expected {tree_id}")
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(found[0]), dest)
    return dest


def link_or_copy(source: Path, dest: Path) -> None:
    """``source`` at ``dest``: a hard link when both are on one filesystem (a benchmark's large shared
    files are then stored once for all its tasks), else a copy."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)
