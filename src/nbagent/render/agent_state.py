"""AgentState: the one typed projection of the event stream that every front end renders.

``reduce(state, event)`` is pure: it returns a new state and never changes the one it was given
(unchanged parts are shared, so a delta costs a few small copies, not a deep copy). ``Agent.snapshot()``
returns the agent's current state; a front end that joins late starts from a snapshot and applies the
events that follow with the same function. The panel's TypeScript reducer follows the same rules,
checked by the recorded sequences in tests/fixtures/event_sequences/ that both test suites run.

Rules worth knowing:
- text and reasoning deltas extend the turn's last item when it is of the same kind, else start one;
  so the items keep the order things happened in (paragraph, tool, paragraph ...);
- a tool call is one item from ``tool_input_start`` (or ``tool_call`` when the model did not stream it)
  to its ``tool_result``; a pending approval is listed in ``approvals`` until its decision or result;
- ``turn_end`` moves the turn into ``transcript`` (a queued prompt dropped by Abort just leaves the queue);
- ``session_changed`` replaces the whole state by the one it carries.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Literal, Union

from .. import events as ev
from .text import note_line, without_note

MAX_NOTICES = 20
"""Notices outside any turn (a compaction, an error answered to a request) kept in the state."""

__all__ = ["AgentState", "Counters", "KernelChange", "NoticeItem", "PendingApproval", "QueuedPrompt", "ReasoningItem",
           "TextItem", "ToolItem", "Turn", "TurnCheckpoint", "reduce"]
"""The public names (docs/python-api.md, "Public modules"): the state, what it holds, and ``reduce``."""

ItemStatus = Literal["input", "running", "awaiting_approval", "done", "failed", "denied", "killed",
                     "interrupted"]
TurnStatus = Literal["running", "done", "aborted", "error", "max_steps"]


@dataclass(frozen=True)
class TextItem:
    text: str = ""
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ReasoningItem:
    text: str = ""
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True)
class KernelChange:
    """What a call did to the kernel's namespace (a ``kernel_changed`` event); see events.KernelChanged."""

    added: tuple[str, ...] = ()
    rebound: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    mutated: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolItem:
    call_id: str = ""
    name: str = ""
    status: ItemStatus = "input"
    input_text: str = ""
    """The arguments as streamed so far (until ``tool_call`` gives them whole)."""
    arguments: dict[str, Any] | None = None
    diff: str | None = None
    decision: ev.Decision | None = None
    decided_by: ev.DecidedBy | None = None
    """Who decided (nbagent.events.DecidedBy): "user" (someone was asked), "always", "read-only mode"..."""
    output: str | None = None
    is_error: bool = False
    duration_ms: float | None = None
    kernel: KernelChange | None = None
    """What the call did to the kernel's namespace, for kernel-changing calls."""
    kind: Literal["tool"] = "tool"


@dataclass(frozen=True)
class NoticeItem:
    """Something the engine said during a turn: an error, a compaction, a memory change, an attached
    context source's note (level "context": the one line the views show; the model got the whole note)."""

    level: Literal["error", "info", "memory", "context"] = "info"
    text: str = ""
    kind: Literal["notice"] = "notice"


@dataclass(frozen=True)
class TurnCheckpoint:
    """The files a finished turn changed (its checkpoint), and whether /undo has put them back; after an
    undo or redo, the kernel variables it bound again and what it could not restore."""

    turn: int = 0
    files: tuple[str, ...] = ()
    undone: bool = False
    names: tuple[str, ...] = ()
    not_restored: tuple[str, ...] = ()
    replay: tuple[dict[str, Any], ...] = ()
    """After an undo that could not restore everything: the restart-and-replay plan on offer (the
    ``checkpoint`` event's ``replay`` cells)."""
    replayed: dict[str, Any] | None = None
    """Once that plan ran (``kernel_replayed``): ``ran``, ``failed``, ``failed_cell_id``, ``error``."""


TurnItem = Union[TextItem, ReasoningItem, ToolItem, NoticeItem]


@dataclass(frozen=True)
class Turn:
    turn_id: str = ""
    prompt: str = ""
    status: TurnStatus = "running"
    items: tuple[TurnItem, ...] = ()
    text: str = ""
    """The final answer (turn_end's text), once the turn has ended."""
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    memory: tuple[dict[str, Any], ...] = ()
    """The memory entries injected into this turn's prompt."""
    checkpoint: TurnCheckpoint | None = None
    """Set when the turn changed files (a ``checkpoint`` event); its Undo/Redo state."""


@dataclass(frozen=True)
class QueuedPrompt:
    turn_id: str = ""
    prompt: str = ""


@dataclass(frozen=True)
class PendingApproval:
    call_id: str = ""
    turn_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    diff: str | None = None
    annotations: dict[str, Any] | None = None
    """An MCP tool's hints as its server declares them (shown, never trusted)."""


@dataclass(frozen=True)
class Counters:
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    cached_tokens: int = 0
    """Of input_tokens, those read from the provider's prompt cache."""
    image_tokens: int = 0
    """Of input_tokens, the estimate for the images the requests carried."""


@dataclass(frozen=True)
class AgentState:
    session_id: str | None = None
    title: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    """model, approval, toolsets, max_steps, workspace: what ``Agent.reconfigure`` can change."""
    queue: tuple[QueuedPrompt, ...] = ()
    turn: Turn | None = None
    """The turn in flight."""
    approvals: tuple[PendingApproval, ...] = ()
    todos: tuple[dict[str, Any], ...] = ()
    memory: tuple[dict[str, Any], ...] = ()
    """The memory entries injected into the latest turn."""
    counters: Counters = field(default_factory=Counters)
    transcript: tuple[Turn, ...] = ()
    """The finished turns, oldest first."""
    notices: tuple[NoticeItem, ...] = ()
    undo_turn: int | None = None
    """The turn /undo would put back now (None: nothing to undo)."""
    redo_turn: int | None = None
    """The turn /redo would re-apply now (None: nothing to redo)."""

    @property
    def busy(self) -> bool:
        return self.turn is not None or bool(self.queue)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (tuples become lists), as the server sends it and ``from_dict`` reads it."""
        return _plain(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "AgentState":
        return _adapter().validate_python(data)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@lru_cache(maxsize=1)
def _adapter():
    import pydantic  # only front ends that rebuild a state from JSON pay for the adapter

    return pydantic.TypeAdapter(AgentState)


# ----- the reducer -----------------------------------------------------------------------------

def reduce(state: AgentState, event: ev.AnyEvent) -> AgentState:
    """The state after ``event``; ``state`` itself is left as it was."""
    handler = _HANDLERS.get(type(event))
    return handler(state, event) if handler is not None else state


def _turn_start(s: AgentState, e: ev.TurnStart) -> AgentState:
    queue = tuple(q for q in s.queue if q.turn_id != e.turn_id)
    turn = Turn(turn_id=e.turn_id, prompt=e.prompt)
    return replace(s, queue=queue, turn=turn, session_id=e.session_id or s.session_id,
                   title=e.title if e.title is not None else s.title, memory=())


def _prompt_queued(s: AgentState, e: ev.PromptQueued) -> AgentState:
    return replace(s, queue=(*s.queue, QueuedPrompt(turn_id=e.turn_id, prompt=e.prompt)))


def _with_turn(s: AgentState, e: ev.Event, change) -> AgentState:
    """Apply ``change(turn) -> turn`` to the turn in flight when the event belongs to it."""
    if s.turn is None or s.turn.turn_id != e.turn_id:
        return s
    return _swap(s, turn=change(s.turn))


def _swap(obj: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` for these frozen classes (no __post_init__, no slots) at a fifth of its cost:
    every streamed delta is reduced twice (the agent's state, the server hub's), and replace's field
    walk was most of the per-delta work on the server's loop (bench/server.py, issue 41); a step's tool
    item and usage take it too (eleven replace calls a step were a tenth of the loop's own work)."""
    new = object.__new__(type(obj))
    fields = new.__dict__
    fields.update(obj.__dict__)
    fields.update(changes)
    return new


def _delta(item_type: type[TextItem] | type[ReasoningItem]):
    def handle(s: AgentState, e) -> AgentState:
        def change(turn: Turn) -> Turn:
            items = turn.items
            last = items[-1] if items else None
            if isinstance(last, (TextItem, ReasoningItem)) and type(last) is item_type:
                return _swap(turn, items=(*items[:-1], item_type(text=last.text + e.text)))
            return _swap(turn, items=(*items, item_type(text=e.text)))

        return _with_turn(s, e, change)

    return handle


def _update_tool(turn: Turn, call_id: str, name: str, **changes: Any) -> Turn:
    """Change the tool item of ``call_id``, adding it at the end when the turn has none yet."""
    for index in range(len(turn.items) - 1, -1, -1):
        item = turn.items[index]
        if isinstance(item, ToolItem) and item.call_id == call_id:
            changed = _swap(item, **changes)
            return _swap(turn, items=(*turn.items[:index], changed, *turn.items[index + 1:]))
    return _swap(turn, items=(*turn.items, ToolItem(call_id=call_id, name=name, **changes)))


def _tool_input_start(s: AgentState, e: ev.ToolInputStart) -> AgentState:
    return _with_turn(s, e, lambda t: _update_tool(t, e.call_id, e.name, status="input"))


def _tool_input_delta(s: AgentState, e: ev.ToolInputDelta) -> AgentState:
    def change(turn: Turn) -> Turn:
        current = next((i for i in reversed(turn.items) if isinstance(i, ToolItem) and i.call_id == e.call_id),
                       None)
        text = (current.input_text if current is not None else "") + e.text
        return _update_tool(turn, e.call_id, e.name, input_text=text)

    return _with_turn(s, e, change)


def _tool_call(s: AgentState, e: ev.ToolCall) -> AgentState:
    return _with_turn(s, e, lambda t: _update_tool(t, e.call_id, e.name, status="running",
                                                   arguments=e.arguments))


def _approval_request(s: AgentState, e: ev.ApprovalRequest) -> AgentState:
    pending = PendingApproval(call_id=e.call_id, turn_id=e.turn_id, name=e.name, arguments=e.arguments,
                              diff=e.diff, annotations=e.annotations)
    s = replace(s, approvals=(*(a for a in s.approvals if a.call_id != e.call_id), pending))
    return _with_turn(s, e, lambda t: _update_tool(t, e.call_id, e.name, status="awaiting_approval",
                                                   diff=e.diff))


def _approval_decision(s: AgentState, e: ev.ApprovalDecision) -> AgentState:
    s = replace(s, approvals=tuple(a for a in s.approvals if a.call_id != e.call_id))
    status = "denied" if e.decision == "deny" else "running"
    return _with_turn(s, e, lambda t: _update_tool(t, e.call_id, e.name, status=status, decision=e.decision,
                                                   decided_by=e.by))


def _tool_result(s: AgentState, e: ev.ToolResult) -> AgentState:
    if any(a.call_id == e.call_id for a in s.approvals):
        s = _swap(s, approvals=tuple(a for a in s.approvals if a.call_id != e.call_id))
    return _with_turn(s, e, lambda t: _update_tool(t, e.call_id, e.name, status=e.status, output=e.output,
                                                   is_error=e.is_error, duration_ms=e.duration_ms))


def _kernel_changed(s: AgentState, e: ev.KernelChanged) -> AgentState:
    change = KernelChange(added=tuple(e.added), rebound=tuple(e.rebound), deleted=tuple(e.deleted),
                          mutated=tuple(e.mutated), unchecked=tuple(e.unchecked), dropped=tuple(e.dropped))
    return _with_turn(s, e, lambda t: _update_tool(t, e.call_id, "", kernel=change))


def _todos_changed(s: AgentState, e: ev.TodosChanged) -> AgentState:
    return replace(s, todos=tuple(e.todos))


def _memory_changed(s: AgentState, e: ev.MemoryChanged) -> AgentState:
    texts = "; ".join(str(entry.get("text", "")) for entry in e.entries)
    notice = NoticeItem(level="memory", text=f"memory {e.action}: {texts}" if texts else f"memory {e.action}")
    return _notice(s, e, notice)


def _memory_injected(s: AgentState, e: ev.MemoryInjected) -> AgentState:
    """A turn may be told more than once (the top entries at its start, relevant ones per step): the
    turn's memory is every entry injected into it, each once (by source and id, else by text)."""
    base = s.turn.memory if s.turn is not None and s.turn.turn_id == e.turn_id else ()
    merged = {_entry_key(x): x for x in base}
    for x in e.entries:  # told again (a search found a listed entry): keep it once, with the score and why
        merged[_entry_key(x)] = {**merged.get(_entry_key(x), {}), **x}
    entries = tuple(merged.values())
    s = replace(s, memory=entries)
    return _with_turn(s, e, lambda t: replace(t, memory=entries))


def _entry_key(entry: dict[str, Any]) -> Any:
    """One entry of one memory: the workspace's and the global memory number their entries apart, and
    the top entries (no source) are the workspace's."""
    if entry.get("id") is None:
        return ("text", entry.get("text"))
    return (entry.get("source") or "workspace", entry.get("id"))


def _settings_changed(s: AgentState, e: ev.SettingsChanged) -> AgentState:
    return replace(s, settings={**s.settings, **e.settings})


def _session_changed(s: AgentState, e: ev.SessionChanged) -> AgentState:
    return AgentState.from_dict(e.state) if e.state else replace(AgentState(), session_id=e.session_id,
                                                                  settings=s.settings)


def _usage(s: AgentState, e: ev.Usage) -> AgentState:
    s = _swap(s, counters=Counters(input_tokens=e.total_input_tokens, output_tokens=e.total_output_tokens,
                                   cost=e.cost, cached_tokens=e.total_cached_tokens,
                                   image_tokens=e.total_image_tokens))
    return _with_turn(s, e, lambda t: _swap(t, input_tokens=t.input_tokens + e.input_tokens,
                                            output_tokens=t.output_tokens + e.output_tokens))


def _compacted(s: AgentState, e: ev.Compacted) -> AgentState:
    return _notice(s, e, NoticeItem(level="info", text=e.message))


def _context_note(s: AgentState, e: ev.ContextNote) -> AgentState:
    return _notice(s, e, NoticeItem(level="context", text=note_line(e.source, e.change, e.summary, e.changes)))


def _error(s: AgentState, e: ev.Error) -> AgentState:
    return _notice(s, e, NoticeItem(level="error", text=e.message))


def _notice(s: AgentState, e: ev.Event, notice: NoticeItem) -> AgentState:
    """In the turn it belongs to, else among the state's own notices (the newest MAX_NOTICES)."""
    if s.turn is not None and s.turn.turn_id == e.turn_id:
        return replace(s, turn=replace(s.turn, items=(*s.turn.items, notice)))
    return replace(s, notices=(*s.notices, notice)[-MAX_NOTICES:])


def _checkpoint(s: AgentState, e: ev.Checkpoint) -> AgentState:
    """A turn's checkpoint taken, undone or redone: on that turn (live or finished); "diverged" is a notice."""
    if e.action == "diverged":
        return _notice(s, e, NoticeItem(level="info", text="changed since the last checkpoint: " + ", ".join(e.files)))
    # Part of a turn undone (its rows, a review): the turn itself is not undone (only a turn not undone is reviewed).
    mark = TurnCheckpoint(turn=e.turn, files=tuple(e.files), undone=e.action == "undone" and not e.rows,
                          names=tuple(e.names),
                          not_restored=tuple(e.not_restored), replay=tuple(dict(c) for c in e.replay))
    s = replace(s, undo_turn=e.undo_turn, redo_turn=e.redo_turn)
    return _mark_turn(s, e.turn_id, lambda _: mark)


def _kernel_replayed(s: AgentState, e: ev.KernelReplayed) -> AgentState:
    """Restart and replay ran: its outcome on the turn whose undo offered it (the plan is no longer on offer)."""
    outcome = {"ran": list(e.ran), "failed": e.failed, "failed_cell_id": e.failed_cell_id, "error": e.error}
    return _mark_turn(s, e.turn_id, lambda mark: replace(mark, replayed=outcome) if mark is not None else None)


def _mark_turn(s: AgentState, turn_id: str,
               change: Callable[[TurnCheckpoint | None], TurnCheckpoint | None]) -> AgentState:
    """``change`` applied to the checkpoint of turn ``turn_id`` (the live turn or one of the transcript)."""
    if s.turn is not None and s.turn.turn_id == turn_id:
        return replace(s, turn=replace(s.turn, checkpoint=change(s.turn.checkpoint)))
    return replace(s, transcript=tuple(replace(t, checkpoint=change(t.checkpoint)) if turn_id and t.turn_id == turn_id
                                       else t for t in s.transcript))


def _turn_end(s: AgentState, e: ev.TurnEnd) -> AgentState:
    queue = tuple(q for q in s.queue if q.turn_id != e.turn_id)
    approvals = tuple(a for a in s.approvals if a.turn_id != e.turn_id)
    if s.turn is None or s.turn.turn_id != e.turn_id:
        return replace(s, queue=queue, approvals=approvals)
    items = tuple(_settled(item) for item in s.turn.items)
    ended = replace(s.turn, status=e.reason, text=e.text, steps=e.steps, items=items)
    return replace(s, queue=queue, approvals=approvals, turn=None, transcript=(*s.transcript, ended))


def _settled(item: TurnItem) -> TurnItem:
    # The engine ends every call with a tool_result; a call still open here was only being streamed.
    if isinstance(item, ToolItem) and item.status in ("input", "running", "awaiting_approval"):
        return replace(item, status="interrupted")
    return item


_HANDLERS: dict[type, Any] = {
    ev.TurnStart: _turn_start,
    ev.PromptQueued: _prompt_queued,
    ev.TextDelta: _delta(TextItem),
    ev.ReasoningDelta: _delta(ReasoningItem),
    ev.ToolInputStart: _tool_input_start,
    ev.ToolInputDelta: _tool_input_delta,
    ev.ToolCall: _tool_call,
    ev.ApprovalRequest: _approval_request,
    ev.ApprovalDecision: _approval_decision,
    ev.ToolResult: _tool_result,
    ev.KernelChanged: _kernel_changed,
    ev.TodosChanged: _todos_changed,
    ev.MemoryChanged: _memory_changed,
    ev.MemoryInjected: _memory_injected,
    ev.SettingsChanged: _settings_changed,
    ev.SessionChanged: _session_changed,
    ev.Usage: _usage,
    ev.Compacted: _compacted,
    ev.ContextNote: _context_note,
    ev.Error: _error,
    ev.Checkpoint: _checkpoint,
    ev.KernelReplayed: _kernel_replayed,
    ev.TurnEnd: _turn_end,
}


# ----- the transcript of stored messages ----------------------------------------------------------

def turns_from_messages(messages: list[dict[str, Any]]) -> tuple[Turn, ...]:
    """Finished turns rebuilt from stored messages (a resumed session's history), in the reducer's shape."""
    turns: list[Turn] = []
    items: list[TurnItem] = []
    prompt: str | None = None
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}

    def close() -> None:
        if prompt is not None:
            texts = [i.text for i in items if isinstance(i, TextItem)]
            turns.append(Turn(turn_id=f"stored-{len(turns) + 1}", prompt=prompt, status="done",
                              items=tuple(items), text=texts[-1] if texts else ""))

    for message in messages:
        role = message.get("role")
        if role == "user":
            close()
            prompt, items = without_note(str(message.get("content") or "")), []
            if message.get("summary"):
                items.append(NoticeItem(level="info", text="the conversation before this was summarised"))
        elif role == "assistant":
            prompt = "" if prompt is None else prompt
            items.extend(_assistant_items(message, results))
    close()
    return tuple(turns)


def _assistant_items(message: dict[str, Any], results: dict[Any, dict[str, Any]]) -> list[TurnItem]:
    items: list[TurnItem] = []
    if message.get("reasoning"):
        items.append(ReasoningItem(text=str(message["reasoning"])))
    if message.get("content"):
        items.append(TextItem(text=str(message["content"])))
    for call in message.get("tool_calls") or ():
        result = results.get(call.get("id"))
        status = "interrupted" if result is None else ("failed" if result.get("is_error") else "done")
        if result is not None and str(result.get("content", "")).startswith("interrupted:"):
            status = "interrupted"
        items.append(ToolItem(call_id=str(call.get("id", "")), name=str(call.get("name", "")), status=status,
                              input_text=str(call.get("arguments") or ""),
                              # No content: a damaged row left in the store (the snapshot's notice names it).
                              output=None if result is None or "content" not in result
                              else without_note(str(result["content"])),
                              is_error=bool(result and result.get("is_error"))))
    return items
