"""``/context``: the attached sources from a notebook (list, attach, mute, unmute, remove).

``/context`` lists them (a table); ``/context attach NAME [--every N] COMMAND...`` attaches a command
source, ``--file PATH`` a watched file, ``--variable NAME`` a kernel variable; ``approve`` (a stored
command source that needs approval), ``mute``, ``unmute`` and ``remove`` take a name. Everything goes through the public ``agent.context`` handle.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from ...attached.records import SourceError

USAGE = """/context                          list the attached sources (status, serial, last change)
/context attach NAME [--every N] [--why TEXT] COMMAND...   a command source, run by the poller
/context attach NAME --file PATH   a watched file (its tail)
/context attach NAME --variable EXPR   a kernel variable (refreshed after each cell)
/context approve NAME              run a stored command source that needs approval (shows its command)
/context mute NAME | unmute NAME | remove NAME"""


def context_command(keeper, arg: str) -> Any:
    from .agent_keeper import KeeperError

    try:
        words = shlex.split(arg)
    except ValueError as exc:
        raise KeeperError(f"/context: {exc}") from None
    action, rest = (words[0].lower(), words[1:]) if words else ("list", [])
    handle = keeper.get().context
    try:
        if action in ("list", "ls"):
            return handle.sources() if handle.store.sources(keeper.get().session_id) else "no attached context sources"
        if action == "attach":
            return _attach(handle, rest)
        if action == "approve" and len(rest) == 1:
            source = handle.approve(rest[0])
            # JSON: every control, escape and non-ASCII character of the command shows as an escape
            return f"approved {source.name} for this workspace: {json.dumps(source.spec)} ({source.status})"
        if action in ("mute", "unmute", "remove") and len(rest) == 1:
            source = getattr(handle, action)(rest[0])
            return f"{action}d {source.name}" if action != "remove" else f"removed {source.name}"
        if action == "help":
            return USAGE
    except SourceError as exc:
        raise KeeperError(str(exc)) from None
    raise KeeperError(f"/context {action}: not understood\n{USAGE}")


OPTIONS = ("--every", "--why", "--file", "--variable")


def _attach(handle, words: list[str]) -> str:
    """NAME, then options, then the command: everything after the options is the command, as written
    (its own dashes included: ``/context attach git git log -5 --oneline``)."""
    if not words:
        raise SourceError(f"/context attach needs a name\n{USAGE}")
    name, rest, options = words[0], words[1:], {}
    while rest and rest[0] in OPTIONS:
        if len(rest) < 2:
            raise SourceError(f"{rest[0]} needs a value\n{USAGE}")
        options[rest[0][2:]], rest = rest[1], rest[2:]
    try:
        every = float(options.pop("every", 30))
    except ValueError:
        raise SourceError("--every takes a number of seconds") from None
    source = handle.attach(name, shlex.join(rest) or None, every=every, file=options.get("file"),
                           variable=options.get("variable"), why=options.get("why") or "attached with /context")
    snap = source.snapshot
    state = f"failing: {snap.error}" if snap and snap.error else (snap.summary if snap else "")
    return f"attached {source.name} ({source.kind}): {state}"
