"""``nbagent undo`` and ``nbagent redo``: move a session's workspace between a turn's checkpoints.

No model is needed: the checkpoints and the session live in the workspace's
the state directory. The session gets the same history note as ``agent.undo()``. When a Jupyter server
with nbagent's extension serves the workspace, notebooks open there are restored through it (their
live documents), as the agent's own undo does; without one, every file is written directly.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from ..checkpoints import CheckpointError, Checkpoints
from ..render.escape import escape_controls
from ..errors import StoreError
from ..store.sessions import SessionStore
from ..checkpoints.turn_guard import undo_note
from ..workspace.state_dir import state_dir


def add_checkpoint_parsers(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> None:
    """``undo`` and ``redo``; ``parents`` hold the options every command takes (``--workspace``)."""
    for action, text in (("undo", "put back the files the last turn changed as they were before it"),
                         ("redo", "re-apply the turn the last undo reverted")):
        p = subparsers.add_parser(action, help=text, parents=parents)
        p.add_argument("--session", "-s", help="session id or unique prefix (default: the newest session)")
        p.add_argument("--force", action="store_true",
                       help="overwrite files changed since the checkpoint instead of refusing")
        p.add_argument("--path", help="only the changes to this file (workspace-relative), as a review would")
        p.add_argument("--cell", help="only the changes to this notebook cell (by id)")
        p.add_argument("--turn", type=int, help="with --path/--cell: the turn (default: the newest with changes)")
        p.set_defaults(handler=run_checkpoint_command, checkpoint_action=action)


def run_checkpoint_command(args: argparse.Namespace) -> int:
    root = Path(getattr(args, "workspace", None) or ".").expanduser().resolve()
    try:
        with SessionStore(root) as store:
            session_id = _session_id(store, args.session)
            if args.path or args.cell:
                return _partial(root, store, session_id, args)
            checkpoints = Checkpoints(root, state_dir(root), session_id)
            checkpoints.notebook_stores = _server_stores(root)
            move = checkpoints.undo if args.checkpoint_action == "undo" else checkpoints.redo
            restored = move(force=args.force)
            session = store.load(session_id)
            session.append([{"role": "user", "content": undo_note(restored), "note": restored.action}])
    except (CheckpointError, StoreError, OSError) as exc:  # OSError: a read-only workspace
        print(f"nbagent: {exc}", file=sys.stderr)
        return 1
    verb = "undid" if restored.action == "undo" else "redid"
    print(f"{verb} turn {restored.turn} of session {session_id}: {len(restored.files)} file(s) changed")
    for path in restored.files:
        print(f"  {_printable(path)}")
    return 0


def _partial(root: Path, store: SessionStore, session_id: str, args: argparse.Namespace) -> int:
    """``--path``/``--cell``: only those rows of the turn (nbagent.checkpoints.review), refused where changed since."""
    from ..checkpoints.review import matching
    from ..checkpoints.review_index import review_for
    from ..checkpoints.turn_guard import review_note
    from ..store.reviews import ReviewLog

    if store.db is None:
        raise StoreError("the workspace's database is not open")
    review = review_for(root, state_dir(root), session_id, ReviewLog(store.db), _server_stores(root))
    path = args.path and Path(args.path).as_posix().removeprefix("./")
    ids = matching(review.changes(args.turn), path, args.cell)
    done = getattr(review, args.checkpoint_action)(args.turn, ids)
    if done.files:
        store.load(session_id).append([{"role": "user", "content": review_note(done), "note": done.action}])
    verb = "undid" if done.action == "undo" else "redid"
    print(f"{verb} {len(done.done)} change(s) of turn {done.turn} of session {session_id}: "
          f"{len(done.files)} file(s) changed")
    for path in done.files:
        print(f"  {_printable(path)}")
    for row_id, reason in done.refused:
        print(f"  refused {row_id}: {_printable(reason)}", file=sys.stderr)
    return 1 if done.refused else 0


def _server_stores(root: Path) -> Callable[[], list[Any]] | None:
    """A running Jupyter server with nbagent's extension serving this workspace restores the notebooks
    open there through their live documents, as the agent's own undo does; else the files are written."""
    from ..jupyter.kernel.server_client import find_server
    from ..tools.nbfile import FILE_STORE

    server = find_server(root)
    return None if server is None else (lambda: [server, FILE_STORE])


def _session_id(store: SessionStore, selector: str | None) -> str:
    if selector:
        return store.resolve(selector)
    newest = store.newest(None) or next((s.id for s in store.list(limit=1)), None)
    if newest is None:
        raise StoreError(f"no session in {store.root}: nothing to undo")
    return newest


def _printable(path: str) -> str:
    # A file name may hold escape sequences: show them, never let the terminal run them.
    return escape_controls(path, keep_newlines=False)
