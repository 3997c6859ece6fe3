"""Slash commands: ``%agent /todos`` and friends.

Each takes the keeper and the rest of the line and returns something to show (text, a DataFrame, a
widget) or None."""

from __future__ import annotations

from typing import Any, Callable

from .attached_command import context_command
from .agent_keeper import AgentKeeper, KeeperError
from ..widgets.format import TODO_MARKS, counts_line_for

HELP = """Slash commands (also as %agent /name):
  /help              this list
  /new               start a new session
  /sessions          this workspace's sessions (a DataFrame)
  /resume ID         continue session ID (or a unique prefix)
  /fork              continue in a copy of this session
  /todos             the session's task list
  /memory            the project memory entries (/memory search Q, /memory remove ID, /memory status)
  /instructions      the instruction files in the system prompt, in order, with their sizes
  /map               the repo map in the system prompt
  /notes             context notes this notebook's agent received
  /context           attached context sources (list, attach, mute, unmute, remove: /context help)
  /compact           replace the transcript by a model-written summary
  /tools             the tools the agent may use
  /mcp [start]       MCP servers, their status and tools (start: start the enabled ones now)
  /model [NAME]      show or change the model
  /tasks             background tasks (commands handed over by bash)
  /undo [force]      put back the files and kernel variables the last turn changed (force: even if changed since)
  /undo --path P --cell ID   only the newest turn's changes to that file and/or cell (a review; --turn N)
  /redo [force]      re-apply the turn the last /undo reverted (or the rows of the last partial /undo)
  /changes [N]       the newest (or N-th) turn's changes as rows, to keep or undo one by one
  /keep [ID...]      mark the newest turn's changes kept (all, or these rows, paths or cell ids)
  /replay            after an /undo that could not restore every variable: show the restart-and-replay plan
  /replay confirm    clear the kernel's variables and run that plan (stops at the first error)
  /checkpoints       this session's checkpoints (a DataFrame)
  /check [NOTEBOOK]  run a copy of the notebook (default: this one) in a fresh kernel and report what
                     fails, what differs and what depends on this kernel's hidden state (%agent check too)
  /clear             clear the live views (the session stays)"""

def run_command(keeper: AgentKeeper, line: str, clear_views: Callable[[], int]) -> Any:
    name, _, arg = line.strip().lstrip("/").partition(" ")
    name, arg = name.lower(), arg.strip()
    handler = COMMANDS.get(name)
    if handler is None:
        raise KeeperError(f"unknown command /{name}; /help lists them")
    if name == "clear":
        return f"cleared {clear_views()} view(s); the session is unchanged"
    return handler(keeper, arg)


def _help(keeper, arg):
    return HELP


def _new(keeper, arg):
    return f"new session {keeper.switch('new')}"


def _resume(keeper, arg):
    if not arg:
        raise KeeperError("/resume needs a session id (or a unique prefix); /sessions lists them")
    return f"resumed session {keeper.switch(arg)}"


def _fork(keeper, arg):
    agent = keeper.get()
    keeper.ensure_idle()
    old = agent.session_id
    return f"forked {old} into {agent.fork(int(arg) if arg else None)}"


def _sessions(keeper, arg):
    from ...store.views import sessions

    agent = keeper.get()
    return sessions(agent.config.workspace)


def _todos(keeper, arg):
    todos = keeper.get().todos
    if not todos:
        return "no todos in this session"
    lines = [f"todos: {counts_line_for(todos)}"]
    lines += [f"  {TODO_MARKS.get(t.get('status'), '?')} {t.get('content', '')}"
              + (f" ({t['note']})" if t.get("note") else "") for t in todos]
    return "\n".join(lines)


def _memory(keeper, arg):
    memory = keeper.get().memory
    if memory is None:
        return "project memory is off (--no-memory)"
    action, _, rest = arg.partition(" ")
    if action in ("search", "remove", "forget", "status", "list"):  # forget: the old name of remove
        return _memory_action(memory, action, rest.strip())
    entries = memory.list()
    if entries.empty:
        return "project memory is empty"
    return "\n".join([f"project memory ({len(entries)} entries):"]
                     + [f"  [{e.category}] {e.text}  (used {e.hits}×)" for e in entries.itertuples()])


def _memory_action(handle, action: str, rest: str) -> Any:
    if action == "list":
        return handle.list()
    if action == "status":
        return handle.status()
    if not rest:
        raise KeeperError(f"/memory {action} needs {'a query' if action == 'search' else 'an id or text'}")
    if action == "search":
        return handle.search(rest)
    removed = handle.forget(rest)
    return removed if not removed.empty else f"no memory entry matched {rest!r}; nothing removed"


def _instructions(keeper, arg):
    files = keeper.get().instruction_files()
    if not files:
        return "no instruction files (AGENTS.md, CLAUDE.md, NBAGENT.md, .nbagent/rules/*.md, or the global one)"
    lines = [f"instruction files, in prompt order ({sum(f.included for f in files):,} characters in the prompt):"]
    lines += [f"  {f.source}  {f.size:,} bytes" + ("" if f.included >= f.size else f", {f.included:,} characters kept")
              for f in files]
    return "\n".join(lines)


def _map(keeper, arg):
    return keeper.get().repo_map() or "the repo map is empty (no source files, or repo_map is off)"


def _notes(keeper, arg):
    if not keeper.notes:
        return "no context notes yet"
    return "\n".join(f"[{n.source}] {n.text}" for n in keeper.notes)


def _compact(keeper, arg):
    agent = keeper.get()
    keeper.ensure_idle()
    result = agent.compact()
    return result.events[0].message if result.ok and result.events else \
        ("; ".join(result.errors) or "compaction failed; nothing changed")


def _tools(keeper, arg):
    agent = keeper.get()
    registry = agent.registry
    lines = [f"tool sets on: {', '.join(registry.enabled) or 'core'}"]
    for tool in registry:
        flags = {"never": "runs", "ask": "asks", "always_ask": "always asks"}[agent.approval_policy(tool.name)]
        lines.append(f"  {tool.name:<16} {flags}")
    return "\n".join(lines)


def _mcp(keeper, arg):
    from ...mcp.status import format_status

    if arg not in ("", "start"):
        raise KeeperError("/mcp takes no argument, or \"start\" to start the enabled servers now")
    if arg == "start":
        keeper.ensure_idle()
    rows = keeper.get().mcp_status(start=arg == "start")
    if not rows:
        return "no MCP servers configured (see docs/mcp.md)"
    return "MCP servers:\n" + format_status(rows)


def _model(keeper, arg):
    agent = keeper.get()
    if not arg:
        return f"model: {agent.session.model or agent.config.model or '(default)'}"
    keeper.configure(model=arg)
    return f"model: {arg}"


def _undo(keeper, arg):
    return _restore(keeper, arg, "undo")


def _redo(keeper, arg):
    return _restore(keeper, arg, "redo")


def _restore(keeper, arg, action: str):
    from ...checkpoints import CheckpointError

    if arg.startswith("--"):
        return _partial(keeper, arg, action)
    if arg not in ("", "force"):
        raise KeeperError(f"/{action} takes nothing or 'force', not {arg!r}")
    agent = keeper.get()
    keeper.ensure_idle()
    try:
        restored = getattr(agent, action)(force=arg == "force")
    except CheckpointError as exc:
        return str(exc)
    if not hasattr(restored, "replay"):  # a redo of the last partial undo: a Reviewed
        return reviewed_text(restored)
    verb = "undid" if action == "undo" else "redid"
    keeper.replay_plan = list(restored.replay) if action == "undo" else []
    return restore_text(restored, verb)


def _partial(keeper, arg, action: str):
    """``/undo --path P --cell ID [--turn N]``: only those rows of the turn (docs/notebooks.md, "Reviewing a turn")."""
    import shlex

    from ...checkpoints import CheckpointError
    from ...checkpoints.review import matching

    options = _options(shlex.split(arg), ("--path", "--cell", "--turn"), f"/{action}")
    turn = int(options["--turn"]) if options.get("--turn", "").isdigit() else None
    agent = keeper.get()
    keeper.ensure_idle()
    try:
        ids = matching(agent.changes(turn), options.get("--path"), options.get("--cell"))
        done = getattr(agent, action)(turn=turn, only=ids)
    except CheckpointError as exc:
        return str(exc)
    return reviewed_text(done)


def _options(words: list[str], known: tuple[str, ...], command: str) -> dict[str, str]:
    if len(words) % 2 or any(w not in known for w in words[::2]):
        raise KeeperError(f"{command} takes {' '.join(k + ' X' for k in known)}, not {' '.join(words)!r}")
    return dict(zip(words[::2], words[1::2]))


def reviewed_text(done) -> str:
    """What a keep, partial undo or redo did (a Reviewed), for the commands."""
    verb = {"undo": "undid", "redo": "redid", "keep": "kept"}[done.action]
    text = f"{verb} {len(done.done)} change(s) of turn {done.turn}"
    if done.files:
        text += ": " + ", ".join(done.files)
    for row_id, reason in done.refused:
        text += f"\nrefused {row_id}: {reason}"
    return text


def _changes(keeper, arg):
    if arg and not arg.isdigit():
        raise KeeperError("/changes takes nothing or a turn number")
    return keeper.get().changes(int(arg) if arg else None)


def _keep(keeper, arg):
    from ...checkpoints import CheckpointError

    agent = keeper.get()
    keeper.ensure_idle()
    try:
        return reviewed_text(agent.keep(only=arg.split() or None))
    except CheckpointError as exc:
        return str(exc)


def restore_text(restored, verb: str) -> str:
    """What an undo or redo did, for /undo and ``nbagent undo``: files, kernel variables, what it could not."""
    text = f"{verb} turn {restored.turn}: " + (", ".join(restored.files) or "no file needed changing")
    if restored.names:
        text += "\nkernel variables: " + ", ".join(restored.names)
    if restored.not_restored:
        text += "\nnot restored: " + "; ".join(restored.not_restored)
    if restored.replay:
        text += (f"\nrestart and replay can rebuild the kernel from {len(restored.replay)} cell(s): "
                 "/replay shows them, /replay confirm runs them")
    return text


def _replay(keeper, arg):
    from ...checkpoints.replay import describe_plan

    cells = keeper.replay_plan
    if arg not in ("", "confirm"):
        raise KeeperError(f"/replay takes nothing or 'confirm', not {arg!r}")
    if not cells:
        return "nothing to replay: /undo offers a plan when it cannot restore a kernel variable in place"
    if arg != "confirm":
        return describe_plan(cells) + "\n/replay confirm runs them"
    keeper.ensure_idle()
    outcome = keeper.get().replay(cells)
    keeper.replay_plan = []
    if outcome.failed is not None:
        return f"{outcome.stopped()}:\n{outcome.error}"
    return f"replayed {len(outcome.ran)} cell(s)"


def _check(keeper, arg):
    from ...errors import ToolError
    from ...tools.nbcheck import check_path
    from ...workspace.root import Workspace

    agent = keeper.get()
    place = keeper.place
    path = arg or (str(place.notebook) if place is not None and place.notebook is not None else "")
    if not path:
        raise KeeperError("/check needs a notebook path: this kernel's own notebook is not known")
    try:
        return check_path(Workspace(agent.config.workspace), path).text()
    except ToolError as exc:
        return f"check: {exc}"


def _checkpoints(keeper, arg):
    return keeper.get().checkpoints()


def _tasks(keeper, arg):
    from ...tools.tasks import task_table

    table = task_table(keeper.get().tasks)
    if table == "no background tasks":
        return table
    return "background tasks:\n" + "\n".join("  " + line for line in table.splitlines())


COMMANDS: dict[str, Callable[[AgentKeeper, str], Any]] = {
    "help": _help, "new": _new, "sessions": _sessions, "resume": _resume, "fork": _fork, "todos": _todos,
    "memory": _memory, "instructions": _instructions, "map": _map, "notes": _notes, "compact": _compact, "tools": _tools, "mcp": _mcp, "model": _model,
    "tasks": _tasks, "undo": _undo, "redo": _redo, "changes": _changes, "keep": _keep, "replay": _replay, "checkpoints": _checkpoints, "check": _check, "context": context_command,
    "clear": lambda keeper, arg: None,
}
