"""Batch workers that clone the workspace from a git URL: one cached bare clone per machine, a checkout per task.

For a Dask cluster without a shared filesystem, ``nbagent.batch(..., git_url=...)`` names a
repository the workers can reach. The client resolves the revision to one commit (so every
task starts from the same files); each worker machine clones the URL once into its cache
(``$NBAGENT_CACHE_DIR/clones``, else ``~/.cache/nbagent/clones``), fetching the commit when
a later batch needs a newer one, and gives each task its own checkout of that commit
(isolation.checkout). The URL and what it serves are treated as hostile: only the
https/http/ssh/git/file transports, never a credential or passphrase prompt, objects checked
on the way in, a bare clone (nothing is checked out, so no filter runs at clone time), and every
later command with hooks, fsmonitor and filter drivers switched off (isolation.git).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from .isolation import IsolationError, Source, filter_overrides, git, object_store, tree_size

TRANSPORTS = ("https", "http", "ssh", "git", "file")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!//)")
_FULL_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# Only the named transports; "ext::" (runs a command) and the rest stay off whatever the config says.
PROTOCOLS = ["-c", "protocol.allow=never",
             *(arg for name in TRANSPORTS for arg in ("-c", f"protocol.{name}.allow=always")),
             "-c", "transfer.fsckObjects=true", "-c", "credential.interactive=never"]


def check_url(url: str) -> str:
    """The URL, if it names a repository over an allowed transport; else a ConfigError saying why."""
    if not isinstance(url, str) or not url.strip() or url != url.strip() or any(c in url for c in "\0\n\r"):
        raise ConfigError(f"git_url must be one repository URL, got {url!r}")
    if url.startswith("-") or "::" in url.split("/", 1)[0]:
        raise ConfigError(f"git_url {url!r} is not a repository URL (options and <transport>:: forms are refused)")
    scheme = _SCHEME.match(url)
    if scheme:
        if scheme.group(1).lower() not in TRANSPORTS:
            raise ConfigError(f"git_url {url!r}: the {scheme.group(1)} transport is not allowed "
                              f"(use one of {', '.join(TRANSPORTS)})")
        return url
    if _SCP_LIKE.match(url):  # user@host:path, ssh
        return url
    raise ConfigError(f"git_url {url!r} is not a URL the workers could clone: use https://, ssh://, "
                      "git://, file:// or user@host:path")


def resolve_revision(url: str, revision: str | None) -> str:
    """The commit ``revision`` (a branch, a tag, HEAD or a full commit id) names at ``url``, asked once
    by the client so that every worker checks out the same commit."""
    if revision and _FULL_SHA.match(revision.lower()):
        return revision.lower()
    wanted = revision or "HEAD"
    if wanted.startswith("-"):
        raise ConfigError(f"revision {wanted!r} is not a branch, tag or commit")
    out = remote_git(Path(tempfile.gettempdir()), "ls-remote", "--", url, wanted)
    refs: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        refs[name] = sha
    for name in (wanted, f"refs/heads/{wanted}", f"refs/tags/{wanted}^{{}}", f"refs/tags/{wanted}"):
        if name in refs:
            return refs[name]
    raise ConfigError(f"{url} has no branch or tag {wanted!r}: push it, or pass revision= a full commit id")


def remote_git(cwd: Path, *args: str) -> str:
    """git talking to a remote: the allowed transports only, and nothing that could wait on a person."""
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "", "SSH_ASKPASS_REQUIRE": "never",
           "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")}
    return git(cwd, *args, env=env, overrides=[], options=PROTOCOLS)


@dataclass(frozen=True)
class RemoteSource:
    """Where the workers get the files: a URL, the commit every task starts from, and the workspace's
    folder inside the repository ("" for its top)."""

    url: str
    commit: str
    subdir: str = ""

    def on_this_machine(self) -> Source:
        """A Source for isolation.make_copy, from this machine's cached clone (made or updated first);
        looked up once per process: the next tasks of the batch start from the same one."""
        key = (self.url, self.commit, self.subdir, cache_root())
        with _PREPARED_LOCK:
            source = _PREPARED.get(key)
            if source is None or not (source.top and (source.top / "HEAD").is_file()):
                clone = cached_clone(self.url, self.commit)
                overrides = filter_overrides(clone)
                source = Source(workspace=clone / self.subdir if self.subdir else clone, top=clone,
                                commit=self.commit, overrides=tuple(overrides),
                                objects=object_store(clone, overrides),
                                size=tree_size(clone, self.commit, overrides))
                _PREPARED[key] = source
        return source


_PREPARED: dict[tuple[str, str, str, Path], Source] = {}
_PREPARED_LOCK = threading.Lock()


def cache_root() -> Path:
    base = os.environ.get("NBAGENT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "nbagent")
    root = Path(base) / "clones"
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    return root


def batch_copies(batch_id: str) -> Path:
    """Where this machine's task checkouts of one batch go (removed when the batch ends)."""
    return cache_root() / "batch" / batch_id


def remove_batch_copies(batch_id: str) -> None:
    """Run on every worker when a batch ends: its copies go, also those of a task whose worker died."""
    shutil.rmtree(batch_copies(batch_id), ignore_errors=True)


def cached_clone(url: str, commit: str) -> Path:
    """This machine's bare clone of ``url`` holding ``commit``: cloned the first time, fetched when the
    commit is new to it. One process at a time per URL (the workers of one machine share the cache)."""
    root = cache_root()
    key = hashlib.sha256(url.encode("utf-8")).hexdigest()[:24]
    clone = root / f"{key}.git"
    fd = os.open(root / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not (clone / "HEAD").is_file():
            shutil.rmtree(clone, ignore_errors=True)  # a clone cut short by a dead worker
            partial = Path(tempfile.mkdtemp(prefix=f"{key}.", suffix=".partial", dir=root))
            remote_git(root, "clone", "--bare", "--quiet", "--no-tags", "--", url, str(partial))
            os.replace(partial, clone)
        if not _has_commit(clone, commit):
            try:
                remote_git(clone, "fetch", "--quiet", "--no-tags", "--", url, commit)
            except IsolationError as exc:
                raise IsolationError(f"{url} does not serve commit {commit}: push it first ({exc})") from None
    finally:
        os.close(fd)  # closing releases the lock
    return clone


def _has_commit(clone: Path, commit: str) -> bool:
    try:
        git(clone, "cat-file", "-e", f"{commit}^{{commit}}", overrides=[])
    except IsolationError:
        return False
    return True
