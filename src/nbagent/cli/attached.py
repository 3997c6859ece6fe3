"""``nbagent context list|attach|approve|push|mute|unmute|remove``: attached context sources from a terminal.

Sources are the workspace's unless ``--session ID`` names a session. ``push`` reads the text from
standard input, so a script or a cron job can feed a source: ``make test 2>&1 | nbagent context push tests``.
A command source stored in the workspace's database that this user never approved here (one that came
with a clone) runs only after ``nbagent context approve NAME``, which shows the command in full and
records the approval outside the workspace (nbagent.workspace.trust).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..attached.fetch import COMMAND_TIMEOUT, check_watchable, refresh
from ..attached.records import Source, SourceError, one_line, parse_output
from ..attached.store import ContextStore
from ..errors import StoreError
from ..store.sessions import SessionStore
from ..events import ApprovalRequest
from ..render.terminal import approval_card
from ..workspace.root import Workspace
from ..workspace.trust import TrustFileRefused, trust


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

    for name, helptext in (("approve", "show a stored command source's command and ask to approve it here"),
                           ("mute", "stop notes and polling for a source (its text stays)"),
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
    found = ContextStore(store.db, root=root).sources(session)  # root: "needs approval" where it does
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
    if kind == "command":  # attaching it from this terminal is the user's approval of this command here
        _trust(root, spec, args.name)
    return _fetch_now(store, source, root, "attached")


def _fetch_now(store: ContextStore, source: Source, root: Path, done: str) -> int:
    fetched = refresh(source, Workspace(root), timeout=COMMAND_TIMEOUT)
    if fetched.output is not None:
        store.record(source.scope, source.name, fetched.output)
        print(f"{done} {source.name}: {fetched.output.summary}")
        return 0
    store.record_error(source.scope, source.name, fetched.error or "failed")
    print(f"{done} {source.name}, but its first fetch failed: {one_line(fetched.error or 'failed', 200)}",
          file=sys.stderr)
    return 1


def cmd_approve(args, store: ContextStore, session: str | None, root: Path) -> int:
    """Show the stored command whole (the terminal's approval card), ask, and record the approval in the
    trust record. ``yes | nbagent context approve NAME`` answers for a script."""
    source = ContextStore(store.db, root=root).find(args.name, session)
    if source.kind != "command":
        raise SourceError(f"{args.name!r} is a {source.kind} source: only command sources need approval")
    if source.trusted:
        print(f"{args.name} is already approved for this workspace")
        return 0
    request = ApprovalRequest(name="context_command", call_id="", arguments={
        "command": source.spec, "source": source.name, "workspace": str(root),
        "runs": f"in the workspace, every {max(source.every or 30, 30):g} s at most, until removed"})
    sys.stderr.write(approval_card(request) + "approve this command for this workspace? [y/N]: ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        print("not approved: the source stays stored and does not run", file=sys.stderr)
        return 1
    _trust(root, source.spec, args.name)
    return _fetch_now(store, source, root, "approved")


def _trust(root: Path, command: str, name: str) -> None:
    try:
        trust(root, command, what=f"context source {name}")
    except TrustFileRefused as exc:  # said as the other errors of the command are: one line, exit 1
        raise SourceError(str(exc)) from None


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
