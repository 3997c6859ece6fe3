"""``nbagent context list|attach|push|mute|unmute|remove``: attached context sources from a terminal.

Sources are the workspace's unless ``--session ID`` names a session. ``push`` reads the text from
standard input, so a script or a cron job can feed a source: ``make test 2>&1 | nbagent context push tests``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..attached.fetch import COMMAND_TIMEOUT, check_watchable, refresh
from ..attached.records import SourceError, one_line, parse_output
from ..attached.store import ContextStore
from ..errors import StoreError
from ..store.sessions import SessionStore
from ..workspace.root import Workspace


def add_context_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """The ``context`` command; ``parents`` carry the options every command takes (``--workspace``)."""
    session = argparse.ArgumentParser(add_help=False)
    session.add_argument("-s", "--session", default=argparse.SUPPRESS,
                         help="a session id (or unique prefix): its own sources instead of the workspace's")
    common = [*parents, session]
    parser = subparsers.add_parser("context", help="attached context sources: list, attach, push, mute, remove",
                                   parents=common)
    sub = parser.add_subparsers(dest="context_command", metavar="COMMAND", required=True)

    def command(name: str, helptext: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=helptext, parents=common)

    p = command("list", "the sources, with status, serial, last change and summary")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.set_defaults(handler=with_context(cmd_list))

    p = command("attach", "attach a command source (or a watched file) and fetch it once")
    p.add_argument("name")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--command", help="shell command whose output is the source's text")
    # -c is --continue everywhere else (one meaning per short flag); kept unlisted for old scripts.
    what.add_argument("-c", dest="command", help=argparse.SUPPRESS)
    what.add_argument("--file", "-f", help="a file inside the workspace to watch (its tail)")
    p.add_argument("--every", type=float, default=30.0, help="seconds between runs (never below the floor, 30)")
    p.add_argument("--why", default="", help="why it is attached (the model reads this)")
    p.add_argument("--wake", action="store_true", help="let a change start a turn (when context_wake is on)")
    p.set_defaults(handler=with_context(cmd_attach))

    p = command("push", "set a pushed source's text from standard input")
    p.add_argument("name")
    p.add_argument("--why", default="", help="why it is attached, when it is new")
    p.set_defaults(handler=with_context(cmd_push))

    for name, helptext in (("mute", "stop notes and polling for a source (its text stays)"),
                           ("unmute", "undo mute"), ("remove", "detach a source")):
        p = command(name, helptext)
        p.add_argument("name")
        p.set_defaults(handler=with_context(globals()[f"cmd_{name}"]))
    return parser


def with_context(command: Callable[..., int]) -> Callable[[argparse.Namespace], int]:
    """The handler of a sub-command: opens the workspace's stores, runs ``command(args, store, session,
    root)``; 1 with a message on an error."""

    def handler(args: argparse.Namespace) -> int:
        root = Path(getattr(args, "workspace", None) or ".")
        try:
            sessions = SessionStore(root)
        except StoreError as exc:
            print(f"nbagent: {exc}", file=sys.stderr)
            return 1
        try:
            if sessions.db is None:
                print(f"nbagent: {sessions.broken}", file=sys.stderr)
                return 1
            selector = getattr(args, "session", None)
            session = sessions.resolve(selector) if selector else None
            return command(args, ContextStore(sessions.db), session, sessions.root)
        except (SourceError, StoreError) as exc:
            print(f"nbagent: {exc}", file=sys.stderr)
            return 1
        finally:
            sessions.close()

    return handler


def cmd_list(args, store: ContextStore, session: str | None, root: Path) -> int:
    found = store.sources(session)
    if args.json:
        for s in found:
            snap = s.snapshot
            print(json.dumps({"name": s.name, "kind": s.kind, "scope": s.scope or "workspace", "status": s.status,
                              "spec": s.spec, "why": s.why, "serial": snap.serial if snap else 0,
                              "summary": snap.summary if snap else "", "error": snap.error if snap else None,
                              "fetched_at": snap.fetched_at if snap else None}, ensure_ascii=False))
        return 0
    if not found:
        print("no attached context sources")
        return 0
    for s in found:
        snap = s.snapshot
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(snap.fetched_at)) if snap and snap.fetched_at else "never"
        line = f"{s.name:<16} {s.kind:<8} {s.status:<8} #{snap.serial if snap else 0:<4} {when}  "
        line += one_line((snap.error if snap and snap.error else snap.summary if snap else "") or "", 80)
        print(line)
    return 0


def cmd_attach(args, store: ContextStore, session: str | None, root: Path) -> int:
    kind, spec = ("command", args.command) if args.command else ("file", args.file)
    if kind == "file":
        check_watchable(spec, Workspace(root))
    source = store.attach(args.name, kind, scope=session or "", spec=spec, why=args.why or "attached from the CLI",
                          every=args.every, wake=args.wake)
    fetched = refresh(source, Workspace(root), timeout=COMMAND_TIMEOUT)
    if fetched.output is not None:
        store.record(source.scope, source.name, fetched.output)
        print(f"attached {args.name}: {fetched.output.summary}")
        return 0
    store.record_error(source.scope, source.name, fetched.error or "failed")
    print(f"attached {args.name}, but its first fetch failed: {one_line(fetched.error or 'failed', 200)}",
          file=sys.stderr)
    return 1


def cmd_push(args, store: ContextStore, session: str | None, root: Path) -> int:
    data = sys.stdin.buffer.read()
    status = store.push(args.name, parse_output(data.decode("utf-8", "replace")), session_id=session,
                        why=args.why or "pushed from the CLI")
    print(f"{args.name}: {'new revision' if status == 'new' else 'unchanged'}")
    return 0


def cmd_mute(args, store: ContextStore, session: str | None, root: Path) -> int:
    store.set_muted(args.name, session, True)
    print(f"muted {args.name}")
    return 0


def cmd_unmute(args, store: ContextStore, session: str | None, root: Path) -> int:
    store.set_muted(args.name, session, False)
    print(f"unmuted {args.name}")
    return 0


def cmd_remove(args, store: ContextStore, session: str | None, root: Path) -> int:
    store.remove(args.name, session)
    print(f"removed {args.name}")
    return 0
