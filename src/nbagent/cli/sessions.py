"""``nbagent sessions list|show|remove|purge|export|import``: the session store from a terminal.

nbagent.cli.app calls ``add_sessions_parser(subparsers)`` and then ``args.handler(args) -> exit code``, as for
every command: each sub-command's handler opens the store and runs it (``with_store``). A StoreError is
printed, never a traceback. ``delete`` is kept, unlisted, as the old name of ``remove``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..render.escape import escape_controls, truncate
from ..errors import StoreError
from ..render.text import cost_text
from ..store.sessions import SessionInfo, SessionStore


def add_sessions_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """The ``sessions`` command; ``parents`` hold the options every command takes (``--workspace``),
    given to each sub-command too so that they work after it (``nbagent sessions list -w X``)."""
    parser = subparsers.add_parser("sessions", help="list, show, remove, purge, export and import sessions",
                                   parents=parents)
    commands = _Commands(parser.add_subparsers(dest="sessions_command", metavar="COMMAND", required=True),
                         parents)

    p = commands.add_parser("list", help="sessions, newest first")
    p.add_argument("-n", "--limit", type=int, default=None, help="show at most N sessions")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.set_defaults(handler=with_store(cmd_list))

    p = commands.add_parser("show", help="one session: its details, todos and transcript")
    p.add_argument("session", help="session id or unique prefix")
    p.add_argument("--json", action="store_true", help="print everything as JSON")
    p.set_defaults(handler=with_store(cmd_show))

    for name, listed in (("remove", True), ("delete", False)):  # delete: the old name, unlisted
        p = commands.add_parser(name, **({"help": "remove a session and everything recorded with it"} if listed else {}))
        p.add_argument("session", help="session id or unique prefix")
        p.set_defaults(handler=with_store(cmd_remove))

    p = commands.add_parser("purge", help="remove sessions not updated for some days")
    p.add_argument("--days", type=float, default=30, help="age in days (default 30; 0 keeps everything)")
    p.set_defaults(handler=with_store(cmd_purge))

    p = commands.add_parser("export", help="write a session as JSON")
    p.add_argument("session", help="session id or unique prefix")
    p.add_argument("--out", "-o", dest="output", help="file to write (default: standard output)")
    p.add_argument("--output", dest="output", help=argparse.SUPPRESS)  # the old spelling, as batch and eval say --out
    p.set_defaults(handler=with_store(cmd_export))

    p = commands.add_parser("import", help="add a session from an exported JSON file")
    p.add_argument("file", help="the JSON file ('-' reads standard input)")
    p.set_defaults(handler=with_store(cmd_import))
    return parser


class _Commands:
    """Adds sub-commands that all take the shared options."""

    def __init__(self, subparsers: Any, parents: Sequence[argparse.ArgumentParser]):
        self.subparsers = subparsers
        self.parents = list(parents)

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return self.subparsers.add_parser(name, parents=self.parents, **kwargs)


def with_store(command: Callable[[argparse.Namespace, SessionStore], int]) -> Callable[[argparse.Namespace], int]:
    """The handler of a sub-command: opens the workspace's store, runs ``command``; 1 with a message on a
    store error."""

    def handler(args: argparse.Namespace) -> int:
        try:
            store = SessionStore(Path(getattr(args, "workspace", None) or "."))
        except StoreError as exc:
            print(f"nbagent: {exc}", file=sys.stderr)
            return 1
        try:
            return command(args, store)
        except StoreError as exc:
            print(f"nbagent: {exc}", file=sys.stderr)
            return 1
        finally:
            store.close()

    return handler


def cmd_list(args, store: SessionStore) -> int:
    listing = store.list(limit=args.limit)
    for problem in listing.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if args.json:
        for info in listing:
            print(json.dumps(info.to_dict(), ensure_ascii=False))
        return 0
    if not listing:
        print("no sessions yet" if not listing.problems else "no readable sessions")
        return 0
    # The MODEL column is as wide as the longest name: names are never cut (titles, last, may be).
    width = max(5, *(len(_safe(info.model or "-")) for info in listing))
    print(f"{'ID':<12} {'UPDATED':<16} {'TURNS':>5} {'TOKENS':>9} {'COST':>8}  {'MODEL':<{width}} TITLE")
    for info in listing:
        print(_list_line(info, width))
    return 0


def _list_line(info: SessionInfo, model_width: int) -> str:
    updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
    return (f"{info.id[:12]:<12} {updated:<16} {info.turns:>5} {info.tokens:>9} {cost_text(info.cost):>8}  "
            f"{_safe(info.model or '-'):<{model_width}} {_safe(info.title or '(untitled)')}")


def cmd_show(args, store: SessionStore) -> int:
    detail = store.show(args.session)
    if args.json:
        print(json.dumps(detail, ensure_ascii=False, indent=1))
        return 0
    s = detail["session"]
    print(f"session  {s['id']}\ntitle    {_safe(s['title'] or '(untitled)')}\n"
          f"model    {_safe(str(s['model']))} ({s['provider']})")
    cost = cost_text(s["cost"])
    print(f"origin   {s['origin']}\nturns    {s['turns']}   tokens in/out {s['input_tokens']}/"
          f"{s['output_tokens']} ({s.get('cached_tokens') or 0} in read from the provider's cache, "
          f"~{s.get('image_tokens') or 0} for images)   cost {cost}")
    if s["parent_id"]:
        print(f"forked   from {s['parent_id']} at turn {s['forked_at_turn']}")
    if detail["todos"]:
        from ..tools.todos import render_todos

        print("\n" + render_todos(detail["todos"]))
    print()
    for message in detail["messages"]:
        print(_message_line(message))
    return 0


def _message_line(message: dict[str, Any], width: int = 160) -> str:
    role = message.get("role", "?")
    if role == "tool":
        text = f"[{message.get('name')}{' error' if message.get('is_error') else ''}] {message.get('content', '')}"
    else:
        calls = ", ".join(c.get("name", "?") for c in message.get("tool_calls") or [])
        text = (message.get("content") or "") + (f" -> {calls}" if calls else "")
    cut = truncate(str(text), width - 11, one_line=True)
    return f"{role:>9}: {escape_controls(cut, keep_newlines=False)}"


def _safe(text: str) -> str:
    """Text from the store (titles come from prompts, imports from anywhere): one line, controls escaped."""
    return escape_controls(text, keep_newlines=False)


def cmd_remove(args, store: SessionStore) -> int:
    from ..checkpoints.turn_guard import forget_sessions

    session_id = store.delete(args.session)
    forget_sessions(store.root, [session_id])
    print(f"removed {session_id}")
    return 0


def cmd_purge(args, store: SessionStore) -> int:
    from ..checkpoints.turn_guard import forget_sessions

    gone = store.purge(args.days)
    forget_sessions(store.root, gone)
    count = len(gone)
    print("purge is off (--days 0 keeps everything)" if args.days <= 0
          else f"purged {count} session(s) not updated for {args.days:g} days")
    return 0


def cmd_export(args, store: SessionStore) -> int:
    text = store.export_json(args.session)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return 0


def cmd_import(args, store: SessionStore) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"cannot read {args.file}: {exc}") from exc
    print(f"imported as {store.import_json(text)}")
    return 0
