"""The trust record: the commands a workspace's stored state names that the user on this machine approved.

A workspace's ``.nbagent/`` can arrive with ``git clone``: its database may hold attached-context
command sources and its ``mcp.json`` may name MCP servers to start. Stored state may name a command;
the command runs only once the user here approved that exact command for that workspace. The
record of those approvals lives OUTSIDE every workspace, in the user's config dir
(``<platformdirs user_config_dir>/nbagent/trusted.json``, or ``$NBAGENT_CONFIG_DIR``), so no
repository can ship its own trust. One JSON file, keyed by the workspace's resolved path and then by
the exact command text: a changed command (another argument, another variable) is a new command.

The file is 0600 in a 0700 folder, replaced atomically (nbagent.workspace.atomic) under an exclusive
lock, so two processes approving at once both keep their entries. A trust file that is a link, not a
regular file, not the user's own or writable by others is not believed: nothing counts as trusted and
nothing is written (``TrustFileRefused`` says why).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..config import user_config_dir
from ..errors import ConfigError
from ..render.redaction import logger
from .atomic import atomic_write

FILE_NAME = "trusted.json"
VERSION = 1
log = logger("nbagent.trust")


class TrustFileRefused(ConfigError):
    """The trust file cannot be believed or written (a link, someone else's, writable by others, not JSON)."""


def trust_path() -> Path:
    """Where the record lives: the user's config dir, never a workspace."""
    return user_config_dir() / FILE_NAME


def workspace_key(root: str | Path) -> str:
    return str(Path(root).expanduser().resolve())


def is_trusted(root: str | Path, command: str) -> bool:
    """Whether the user approved exactly ``command`` for the workspace at ``root``."""
    try:
        entries = _read()["workspaces"].get(workspace_key(root), {})
    except TrustFileRefused as exc:
        log.warning("%s", exc)
        return False
    return isinstance(entries, dict) and command in entries


def trust(root: str | Path, command: str, what: str = "") -> None:
    """Record the user's approval of ``command`` for the workspace at ``root`` (``what`` says what it is for)."""
    if not isinstance(command, str) or not command.strip():
        raise ValueError("only a non-empty command can be trusted")
    with _locked() as record:
        record["workspaces"].setdefault(workspace_key(root), {})[command] = {
            "what": what, "approved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


@contextmanager
def _locked() -> Iterator[dict[str, Any]]:
    """The record, read under the folder's lock and written back atomically when the block ends."""
    path = trust_path()
    _private_dir(path.parent)
    lock_path = path.with_name(FILE_NAME + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        record = _read()
        yield record
        atomic_write(path, json.dumps(record, indent=1, ensure_ascii=False, sort_keys=True) + "\n", mode=0o600)
    finally:
        os.close(fd)  # drops the lock


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise TrustFileRefused(f"{path} is not a directory; nbagent keeps its trust record there")
    _check_owner(path, info)


def _check_owner(path: Path, info: os.stat_result) -> None:
    if info.st_uid != os.getuid():
        raise TrustFileRefused(f"{path} belongs to another user: nbagent does not believe its trust record")
    if stat.S_IMODE(info.st_mode) & 0o022:
        raise TrustFileRefused(f"{path} is writable by other users: nbagent does not believe its trust record "
                               f"(chmod go-w {path})")


def _read() -> dict[str, Any]:
    """The record ({"version", "workspaces"}); empty when there is none yet."""
    path = trust_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {"version": VERSION, "workspaces": {}}
    except OSError as exc:  # ELOOP: a link in its place
        raise TrustFileRefused(f"{path} cannot be read as nbagent's trust record ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TrustFileRefused(f"{path} is not a regular file: nbagent does not believe it")
        _check_owner(path, info)
        data = handle.read(16 << 20)
    try:
        record = json.loads(data)
    except ValueError as exc:
        raise TrustFileRefused(f"{path} is not valid JSON ({exc}): fix or remove it (nothing is trusted "
                               "meanwhile, and nbagent leaves it as it is)") from None
    if not isinstance(record, dict) or not isinstance(record.get("workspaces"), dict):
        raise TrustFileRefused(f"{path} is not nbagent's trust record (no \"workspaces\" object): fix or remove it")
    return record
