"""Slash commands: ``%agent /todos`` and friends.

Each takes the keeper and the rest of the line and returns something to show (text, a DataFrame, a
widget) or None."""

from __future__ import annotations

from typing import Any, Callable

from .kernel_agent import AgentKeeper, KeeperError
from .widgets.format import TODO_MARKS, counts_line_for

NOT_YET = {
    "context": "/context is not available yet: attached context sources have not landed.",
}

HELP = """Slash commands (also as %agent /name):
  /help              this list
  /new               start a new session
  /sessions          this workspace's sessions (a DataFrame)
  /resume ID         continue session ID (or a unique prefix)
  /fork              continue in a copy of this session
  /todos             the session's task list
  /memory            the project memory entries
  /compact           replace the transcript by a model-written summary
  /tools             the tools the agent may use
  /model [NAME]      show or change the model
  /tasks             background tasks (commands handed over by bash)
  /undo [force]      put back the files the last turn changed (force: even if changed since)
  /redo [force]      re-apply the turn the last /undo reverted
  /checkpoints       this session's checkpoints (a DataFrame)
  /clear             clear the live views (the session stays)
  /context           not available yet"""


def run_command(keeper: AgentKeeper, line: str, clear_views: Callable[[], int]) -> Any:
    name, _, arg = line.strip().lstrip("/").partition(" ")
    name, arg = name.lower(), arg.strip()
    if name in NOT_YET:
        return NOT_YET[name]
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
    from ..api import sessions

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
    entries = memory.entries()
    if not entries:
        return "project memory is empty"
    return "\n".join([f"project memory ({len(entries)} entries):"]
                     + [f"  [{e.kind}] {e.text}  (used {e.hits}×)" for e in entries])


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
    from ..checkpoints import CheckpointError

    if arg not in ("", "force"):
        raise KeeperError(f"/{action} takes nothing or 'force', not {arg!r}")
    agent = keeper.get()
    keeper.ensure_idle()
    try:
        restored = getattr(agent, action)(force=arg == "force")
    except CheckpointError as exc:
        return str(exc)
    verb = "undid" if action == "undo" else "redid"
    return f"{verb} turn {restored.turn}: " + (", ".join(restored.files) or "no file needed changing")


def _checkpoints(keeper, arg):
    return keeper.get().checkpoints()


def _tasks(keeper, arg):
    from ..tools.tasks import task_table

    table = task_table(keeper.get().tasks)
    if table == "no background tasks":
        return table
    return "background tasks:\n" + "\n".join("  " + line for line in table.splitlines())


COMMANDS: dict[str, Callable[[AgentKeeper, str], Any]] = {
    "help": _help, "new": _new, "sessions": _sessions, "resume": _resume, "fork": _fork, "todos": _todos,
    "memory": _memory, "compact": _compact, "tools": _tools, "model": _model,
    "tasks": _tasks, "undo": _undo, "redo": _redo, "checkpoints": _checkpoints,
    "clear": lambda keeper, arg: None,
}
