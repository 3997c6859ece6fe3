"""Refreshing one polled source: run a command source's shell command, or read a watched file.

A command runs ``bash -c`` in its own session and process group (nbagent.workspace.procs), stdin closed, in the
workspace root; a timeout or an output over the cap kills its whole tree. A watched file is read only if
it is a regular file inside the workspace (no FIFO, no device, no symlink leading out), and only its
last ``FILE_TAIL_BYTES``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from ..workspace.procs import ProcessRef, kill_tree, start_shell
from ..workspace.root import Workspace
from .records import TEXT_MAX_BYTES, Output, SourceError, Source, parse_output
from ..workspace.trust import is_trusted

COMMAND_TIMEOUT = 20.0
FILE_TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class Fetched:
    """A refresh's outcome: ``output`` when it worked, else ``error`` (the last good text stays), or
    ``needs_approval``: the command was not run, the user here has not approved it for this workspace."""

    output: Output | None = None
    error: str | None = None
    needs_approval: bool = False


def refresh(source: Source, workspace: Workspace, *, timeout: float = COMMAND_TIMEOUT,
            cap: int = TEXT_MAX_BYTES, env: dict[str, str] | None = None) -> Fetched:
    """Fetch a source's text now. A command runs only when the trust record holds it for this workspace:
    the database it comes from may have arrived with the repository (issue 26, finding 1)."""
    try:
        if source.kind == "command":
            if not is_trusted(workspace.root, source.spec):
                return Fetched(needs_approval=True)
            return Fetched(output=parse_output(run_command(source.spec, workspace.root, timeout=timeout, cap=cap,
                                                           env={"NBAGENT_CONTEXT_NAME": source.name, **(env or {})})))
        if source.kind == "file":
            return Fetched(output=parse_output(read_watched(source.spec, workspace)))
    except (SourceError, ToolError) as exc:
        return Fetched(error=str(exc))
    raise SourceError(f"a {source.kind} source is not polled")


def run_command(command: str, cwd: Path, *, timeout: float, cap: int, env: dict[str, str] | None = None) -> str:
    """The command's stdout and stderr; SourceError on a non-zero exit, a timeout or output over ``cap``."""
    proc = start_shell(command, cwd, env=env)
    ref = ProcessRef.of(proc.pid)
    chunks: list[bytes] = []
    over = threading.Event()
    reader = threading.Thread(target=_read_capped, args=(proc, chunks, cap, over, ref), daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(ref)
        proc.wait()
        reader.join(2)
        raise SourceError(f"the command ran over its {timeout:g} s limit and was killed") from None
    reader.join(2)
    if over.is_set():
        raise SourceError(f"the command printed over {cap // 1024} KiB and was killed")
    text = b"".join(chunks).decode("utf-8", "replace")
    if code != 0:
        tail = text.strip().splitlines()[-3:]
        raise SourceError(f"exit {code}" + (": " + " | ".join(tail) if tail else ""))
    return text


def _read_capped(proc: subprocess.Popen, chunks: list[bytes], cap: int, over: threading.Event,
                 ref: ProcessRef) -> None:
    size = 0
    stream = proc.stdout
    assert stream is not None
    read = getattr(stream, "read1", stream.read)  # read1: whatever is there, without waiting for 64 KiB
    with stream:
        while True:
            block = read(65536)
            if not block:
                return
            size += len(block)
            if size > cap:
                over.set()
                kill_tree(ref)
                return
            chunks.append(block)


def check_watchable(path: str, workspace: Workspace) -> None:
    """Refuse, before anything is stored, a watched path that leads out of the workspace."""
    try:
        workspace.resolve(path)
    except ToolError as exc:
        raise SourceError(str(exc)) from None


def read_watched(path: str, workspace: Workspace) -> str:
    """The tail of a regular file inside the workspace, decoded as UTF-8 (bad bytes replaced)."""
    resolved = workspace.resolve(path)
    try:
        info = os.stat(resolved)
    except FileNotFoundError:
        raise SourceError(f"{path} does not exist (yet)") from None
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(f"{path} is not a regular file: only files are watched")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(resolved, flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped between stat and open
            raise SourceError(f"{path} is not a regular file: only files are watched")
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - FILE_TAIL_BYTES))
        data = handle.read(FILE_TAIL_BYTES)
    text = data.decode("utf-8", "replace")
    if size > FILE_TAIL_BYTES:  # started mid-line: drop the partial first line
        text = text.partition("\n")[2]
    return text
