"""nbagent's events as Agent Client Protocol session updates: one session's translator, pure but for file reads.

``Translator.updates(event)`` returns the ``session/update`` payloads one event makes: text and reasoning
deltas become agent message and thought chunks, a tool call becomes a ``tool_call`` that later
``tool_call_update``s complete (kind, title, locations, and for an edit the file's whole text before and
after, so the editor shows a real diff; for a notebook edit, the cell), the todo list becomes the plan.
``replay(state)`` gives the updates that retell a stored session (``session/load``). The text the model wrote
is passed on as it is (the client renders it); titles, which clients show as plain lines, go through
``render.escape.escape_controls``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from acp import schema as s

from .. import events as ev
from ..render.agent_state import AgentState, ReasoningItem, TextItem, ToolItem, Turn
from ..render.escape import escape_controls, truncate
from ..render.text import summarize_arguments
from ..workspace import safe_read
from ..tools.edits import apply_edits

Update = (s.AgentMessageChunk | s.AgentThoughtChunk | s.UserMessageChunk | s.ToolCallStart | s.ToolCallProgress
          | s.AgentPlanUpdate | s.SessionInfoUpdate | s.CurrentModeUpdate | s.ConfigOptionUpdate | s.UsageUpdate)

KINDS: dict[str, s.ToolKind] = {
    "read_file": "read", "read_many_files": "read", "list_dir": "read", "notebook_read": "read",
    "context_read": "read", "task_get": "read", "task_list": "read",
    "write_file": "edit", "edit_file": "edit", "multi_edit": "edit", "notebook_edit": "edit",
    "notebook_insert": "edit", "notebook_delete": "delete", "notebook_move": "move",
    "grep": "search", "glob": "search", "recall": "search",
    "bash": "execute", "kernel_run": "execute", "notebook_run": "execute", "task_wait": "execute",
    "task_stop": "execute", "todo_write": "think",
}
FILE_EDITS = ("write_file", "edit_file", "multi_edit")
NOTEBOOK_CELL_TOOLS = ("notebook_edit", "notebook_insert", "notebook_delete", "notebook_move", "notebook_run")
OUTPUT_SHOWN = 20_000
"""Characters of a tool's output sent to the client (the model got the whole, limited output)."""
DIFF_MAX_BYTES = 1 << 20
"""Files larger than this are not sent whole for a diff: the unified diff in the output says it."""


def text_chunk(text: str) -> s.AgentMessageChunk:
    return s.AgentMessageChunk(session_update="agent_message_chunk", content=_text(text))


def _text(text: str) -> s.TextContentBlock:
    return s.TextContentBlock(type="text", text=text)


def _shown(text: str) -> s.ContentToolCallContent:
    return s.ContentToolCallContent(type="content", content=_text(text))


@dataclass
class _Call:
    name: str
    title: str
    kind: s.ToolKind
    locations: list[s.ToolCallLocation] | None = None
    path: Path | None = None
    before: str | None = None
    """An edited file's text before the call (None: the file did not exist)."""
    proposed: str | None = None
    cell: str | None = None
    """For a notebook cell tool: the cell as the client should show it."""


class Translator:
    """One ACP session's view of one agent's events. ``resolve`` maps a tool's path argument to the file
    (the workspace's confinement; it raises for a path outside)."""

    def __init__(self, resolve: Callable[[str], Path], context_size: Callable[[], int] = lambda: 0):
        self.resolve = resolve
        self.context_size = context_size
        """The history's budget in tokens, where nbagent compacts (``compact_threshold``): the size a
        ``usage_update`` gives (nbagent does not know the model's own window)."""
        self.calls: dict[str, _Call] = {}
        self.terminals: dict[str, str] = {}
        """call id -> the id of the client's terminal its command runs in (nbagent.acp.terminal)."""
        self.title: str | None = None

    def updates(self, event: ev.Event) -> list[Update]:
        handler = _HANDLERS.get(type(event))
        return handler(self, event) if handler is not None else []

    # ----- events ------------------------------------------------------------------------------------
    def _turn_start(self, e: ev.TurnStart) -> list[Update]:
        if e.title and e.title != self.title:
            self.title = e.title
            return [s.SessionInfoUpdate(session_update="session_info_update", title=escape_controls(e.title))]
        return []

    def _text_delta(self, e: ev.TextDelta) -> list[Update]:
        return [text_chunk(e.text)] if e.text else []

    def _reasoning_delta(self, e: ev.ReasoningDelta) -> list[Update]:
        return [s.AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(e.text))] if e.text else []

    def _tool_input_start(self, e: ev.ToolInputStart) -> list[Update]:
        self.calls[e.call_id] = _Call(e.name, escape_controls(e.name), KINDS.get(e.name, "other"))
        return [s.ToolCallStart(session_update="tool_call", tool_call_id=e.call_id, title=escape_controls(e.name),
                                kind=KINDS.get(e.name, "other"), status="pending")]

    def _tool_call(self, e: ev.ToolCall) -> list[Update]:
        started = e.call_id in self.calls
        call = self._describe(e.name, e.arguments)
        self.calls[e.call_id] = call
        fields: dict[str, Any] = dict(tool_call_id=e.call_id, title=call.title, kind=call.kind,
                                      locations=call.locations, raw_input=e.arguments, content=self.preview(call))
        if started:
            return [s.ToolCallProgress(session_update="tool_call_update", **fields)]
        return [s.ToolCallStart(session_update="tool_call", status="pending", **fields)]

    def _approval_decision(self, e: ev.ApprovalDecision) -> list[Update]:
        if e.decision == "deny" or e.call_id not in self.calls:
            return []  # its tool_result says it was denied
        return [s.ToolCallProgress(session_update="tool_call_update", tool_call_id=e.call_id, status="in_progress")]

    def _tool_result(self, e: ev.ToolResult) -> list[Update]:
        call = self.calls.pop(e.call_id, None)
        terminal = self.terminals.pop(e.call_id, None)
        content: list[Any] = []
        if call is not None and e.status == "done":
            content += self._after(call)
        if terminal is not None:  # the client shows the command's output in its terminal, kept after release
            content.append(s.TerminalToolCallContent(type="terminal", terminal_id=terminal))
        if e.output and (terminal is None or e.is_error):
            content.append(_shown(truncate(e.output, OUTPUT_SHOWN)))
        return [s.ToolCallProgress(session_update="tool_call_update", tool_call_id=e.call_id,
                                   status="completed" if e.status == "done" and not e.is_error else "failed",
                                   content=content or None,
                                   raw_output={"status": e.status, "is_error": e.is_error,
                                               "duration_ms": e.duration_ms})]

    def _todos_changed(self, e: ev.TodosChanged) -> list[Update]:
        return [plan(e.todos)]

    def _usage(self, e: ev.Usage) -> list[Update]:
        # After each model call: what the context holds now (its input and its answer) and the session's cost.
        cost = s.Cost(amount=e.cost, currency="USD") if e.cost is not None else None
        used = e.input_tokens + e.output_tokens
        return [s.UsageUpdate(session_update="usage_update", used=used, size=max(self.context_size(), used),
                              cost=cost)]

    def _error(self, e: ev.Error) -> list[Update]:
        # Clients show no other channel in the chat: the error is said where the answer would have been.
        return [text_chunk(f"\n\n⚠ nbagent ({e.kind}): {e.message}\n")]

    # ----- tool calls: title, locations, diffs -------------------------------------------------------
    def _describe(self, name: str, arguments: dict[str, Any]) -> _Call:
        title = escape_controls(f"{name}: {summarize_arguments(name, arguments)}" if arguments else name,
                                keep_newlines=False)
        call = _Call(name, title, KINDS.get(name, "other"))
        path = arguments.get("path")
        if not isinstance(path, str) or name.startswith("mcp__"):
            return call
        try:
            call.path = self.resolve(path)
        except Exception:  # outside the workspace: the tool refuses it, the client gets no location
            return call
        line = arguments.get("offset") if name == "read_file" else None
        meta = None
        if name in NOTEBOOK_CELL_TOOLS:
            cells = arguments.get("cell_ids") or [arguments.get("cell_id") or arguments.get("after_cell_id")]
            meta = {"nbagent": {"cells": [c for c in cells if c]}}
            call.cell = _cell_text(name, arguments)
        call.locations = [s.ToolCallLocation(path=str(call.path), line=line if isinstance(line, int) else None,
                                             field_meta=meta)]
        if name in FILE_EDITS:
            call.before = _read(call.path)
            call.proposed = _proposed(name, arguments, call.before)
        return call

    def preview(self, call: _Call) -> list[Any] | None:
        """What a call will do, for its tool_call and its permission request: the edit as a diff, the cell."""
        if call.path is not None and call.proposed is not None:
            return [s.FileEditToolCallContent(type="diff", path=str(call.path), old_text=call.before,
                                              new_text=call.proposed)]
        if call.cell is not None:
            return [_shown(call.cell)]
        return None

    def _after(self, call: _Call) -> list[Any]:
        if call.path is None or call.name not in FILE_EDITS:
            return [_shown(call.cell)] if call.cell is not None else []
        after = _read(call.path)
        if after is None or after == call.before:
            return []
        return [s.FileEditToolCallContent(type="diff", path=str(call.path), old_text=call.before, new_text=after)]

    def permission_call(self, e: ev.ApprovalRequest) -> s.ToolCallUpdate:
        """The call a ``session/request_permission`` shows: title, kind, locations and the proposed change."""
        call = self.calls.get(e.call_id) or self._describe(e.name, e.arguments)
        content: list[Any] | None = self.preview(call)
        if content is None and e.diff:
            content = [_shown(f"```diff\n{e.diff}\n```")]
        return s.ToolCallUpdate(tool_call_id=e.call_id, title=call.title, kind=call.kind, status="pending",
                                locations=call.locations, raw_input=e.arguments, content=content,
                                field_meta={"nbagent": {"annotations": e.annotations}} if e.annotations else None)


_HANDLERS: dict[type, Callable[[Translator, Any], list[Update]]] = {
    ev.TurnStart: Translator._turn_start, ev.TextDelta: Translator._text_delta,
    ev.ReasoningDelta: Translator._reasoning_delta, ev.ToolInputStart: Translator._tool_input_start,
    ev.ToolCall: Translator._tool_call, ev.ApprovalDecision: Translator._approval_decision,
    ev.ToolResult: Translator._tool_result, ev.TodosChanged: Translator._todos_changed, ev.Error: Translator._error,
    ev.Usage: Translator._usage,
}

_PLAN_STATUS: dict[str, s.PlanEntryStatus] = {"pending": "pending", "in_progress": "in_progress",
                                              "completed": "completed", "blocked": "pending"}


def plan(todos: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> s.AgentPlanUpdate:
    """The todo list as the ACP plan (a blocked item is pending, its note in its text)."""
    entries = []
    for todo in todos:
        text = str(todo.get("content", ""))
        if todo.get("status") == "blocked":
            text += f" (blocked: {todo.get('note', '')})"
        entries.append(s.PlanEntry(content=text, priority="medium",
                                   status=_PLAN_STATUS.get(str(todo.get("status")), "pending")))
    return s.AgentPlanUpdate(session_update="plan", entries=entries)


def replay(state: AgentState, resolve: Callable[[str], Path]) -> list[Update]:
    """The updates that retell a stored session: each turn's prompt, reasoning, text and tool calls with
    their outcome, then the todo list (``session/load``)."""
    out: list[Update] = []
    translator = Translator(resolve)
    for turn in state.transcript:
        out += _replay_turn(turn, translator)
    if state.title:
        out.append(s.SessionInfoUpdate(session_update="session_info_update", title=escape_controls(state.title)))
    if state.todos:
        out.append(plan(state.todos))
    return out


def _replay_turn(turn: Turn, translator: Translator) -> list[Update]:
    out: list[Update] = [s.UserMessageChunk(session_update="user_message_chunk", content=_text(turn.prompt))]
    for item in turn.items:
        if isinstance(item, TextItem) and item.text:
            out.append(text_chunk(item.text))
        elif isinstance(item, ReasoningItem) and item.text:
            out.append(s.AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(item.text)))
        elif isinstance(item, ToolItem):
            arguments = item.arguments if item.arguments is not None else _arguments(item.input_text)
            call = translator._describe(item.name, arguments)
            ok = item.status == "done" and not item.is_error
            content: list[Any] | None = [_shown(truncate(item.output, OUTPUT_SHOWN))] if item.output else None
            out.append(s.ToolCallStart(session_update="tool_call", tool_call_id=item.call_id, title=call.title,
                                       kind=call.kind, status="completed" if ok else "failed",
                                       locations=call.locations, raw_input=arguments, content=content))
    return out


def _arguments(text: str) -> dict[str, Any]:
    """A stored call's arguments (kept as the model wrote them: JSON, or not when the call was cut)."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _read(path: Path) -> str | None:
    try:  # the safe read: a regular file checked once open, never above the cap
        return safe_read.read_bytes(path, max_bytes=DIFF_MAX_BYTES)[0].decode("utf-8")
    except (OSError, UnicodeDecodeError):  # a TooLarge or NotRegularFile is an OSError too
        return None


def _proposed(name: str, arguments: dict[str, Any], before: str | None) -> str | None:
    """The file's whole text as the call would leave it (None when the edit would not apply: the tool says
    why, and the client still gets the unified diff with the permission request)."""
    try:
        if name == "write_file":
            content = arguments.get("content")
            return content if isinstance(content, str) else None
        if before is None:
            return None
        if name == "edit_file":
            edits = [{k: arguments[k] for k in ("old_string", "new_string", "replace_all") if k in arguments}]
        else:
            edits = arguments.get("edits") or []
        return apply_edits(before, edits)[0]
    except Exception:  # an edit that does not match: the call fails with the tool's own message
        return None


def _cell_text(name: str, arguments: dict[str, Any]) -> str:
    if name == "notebook_run":
        return "run cells " + ", ".join(f"`{c}`" for c in arguments.get("cell_ids") or [])
    cell = arguments.get("cell_id") or (f"new {arguments.get('cell_type', '')} cell after "
                                        f"`{arguments.get('after_cell_id') or 'the start'}`")
    source = arguments.get("source")
    head = f"cell `{cell}`" if arguments.get("cell_id") else cell
    if name == "notebook_delete":
        return f"delete {head}"
    if name == "notebook_move":
        return f"move {head} after `{arguments.get('after_cell_id') or 'the start'}`"
    return f"{head}:\n```\n{source}\n```" if isinstance(source, str) else head
