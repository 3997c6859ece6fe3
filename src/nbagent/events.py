"""The one typed event stream that every front end renders.

Each event is a small dataclass with a ``type`` string; ``to_dict()`` gives
plain JSON-serialisable data (the server extension sends it over a WebSocket
unchanged) and ``event_from_dict()`` turns it back into the dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, dataclass_transform

TurnEndReason = Literal["done", "aborted", "error", "max_steps"]
ToolStatus = Literal["done", "failed", "denied", "killed", "interrupted"]
Decision = Literal["approve", "deny", "always"]


@dataclass
class Event:
    """Base of all events. ``turn_id`` ties an event to the turn that made it."""

    type: str = field(init=False, default="event")
    turn_id: str = field(default="", kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        # A shallow copy is enough: every field holds JSON data already,
        # and asdict()'s deep copy costs ~10x more on hot deltas.
        # ``type`` lives on the class (an init=False default), so add it here.
        return {"type": self.type, **self.__dict__}


@dataclass_transform(field_specifiers=(field,))
def _event(type_name: str):
    """Class decorator: a dataclass whose ``type`` field defaults to ``type_name``."""

    def wrap(cls):
        # Redeclaring the inherited field keeps its position and gives this
        # class its own default, so ``TextDelta().type == "text_delta"``.
        cls.__annotations__ = {"type": str, **cls.__dict__.get("__annotations__", {})}
        cls.type = field(init=False, default=type_name)
        cls = dataclass(cls)
        EVENT_TYPES[type_name] = cls
        return cls

    return wrap


EVENT_TYPES: dict[str, type[Event]] = {}


@_event("turn_start")
class TurnStart(Event):
    prompt: str = ""
    session_id: str | None = None
    title: str | None = None
    """The session's title once this turn has begun (the first prompt names a session)."""


@_event("prompt_queued")
class PromptQueued(Event):
    """A prompt submitted while a turn runs; ``position`` counts from 1."""

    prompt: str = ""
    position: int = 0


@_event("reasoning_delta")
class ReasoningDelta(Event):
    text: str = ""


@_event("text_delta")
class TextDelta(Event):
    text: str = ""


@_event("tool_input_start")
class ToolInputStart(Event):
    """The model has started a tool call: its name is known, its arguments are not yet."""

    name: str = ""
    call_id: str = ""


@_event("tool_input_delta")
class ToolInputDelta(Event):
    name: str = ""
    call_id: str = ""
    text: str = ""


@_event("tool_call")
class ToolCall(Event):
    name: str = ""
    call_id: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


@_event("approval_request")
class ApprovalRequest(Event):
    """The turn waits for a decision on this call; ``diff`` previews an edit.

    ``annotations``: an MCP tool's hints as its server declares them (readOnlyHint, destructiveHint,
    idempotentHint, openWorldHint, title), shown to the user, never trusted to skip the question."""

    name: str = ""
    call_id: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    diff: str | None = None
    annotations: dict[str, Any] | None = None


@_event("approval_decision")
class ApprovalDecision(Event):
    name: str = ""
    call_id: str = ""
    decision: str = "approve"
    by: str = "user"


@_event("tool_result")
class ToolResult(Event):
    """The end of a call, exactly once per call: ``status`` is done, failed, denied, killed (Stop), or
    interrupted (the turn was aborted before the call finished)."""

    name: str = ""
    call_id: str = ""
    output: str = ""
    is_error: bool = False
    status: str = "done"
    duration_ms: float = 0.0


@_event("todos_changed")
class TodosChanged(Event):
    todos: list[dict[str, Any]] = field(default_factory=list)


@_event("memory_changed")
class MemoryChanged(Event):
    action: str = ""
    entries: list[dict[str, Any]] = field(default_factory=list)


@_event("memory_injected")
class MemoryInjected(Event):
    """The project-memory entries this turn's prompt carries (each a dict: id, kind, text, and where
    known ``score`` and ``why``)."""

    entries: list[dict[str, Any]] = field(default_factory=list)


@_event("settings_changed")
class SettingsChanged(Event):
    """``Agent.reconfigure`` changed settings of the live agent: the new values of what changed."""

    settings: dict[str, Any] = field(default_factory=dict)


@_event("session_changed")
class SessionChanged(Event):
    """The agent moved to another session (new, resume, fork): ``state`` is the whole new AgentState
    (as ``to_dict()``), which replaces the old one in every front end."""

    session_id: str = ""
    state: dict[str, Any] = field(default_factory=dict)


@_event("usage")
class Usage(Event):
    """Tokens of one model call, and the session's running totals."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    cost: float | None = None
    cached_tokens: int = 0
    """Of input_tokens, those the provider read from its prompt cache (0 when it does not say)."""
    total_cached_tokens: int = 0


@_event("compacted")
class Compacted(Event):
    before: int = 0
    after: int = 0
    message: str = ""


@_event("context_note")
class ContextNote(Event):
    """An attached source's note, added to the history before a turn (nbagent.attached).

    ``change`` is attached, updated, failing or removed; ``changes`` counts the revisions since the
    model last saw the source; ``text`` is the note as the model reads it."""

    source: str = ""
    note_id: str = ""
    change: str = "updated"
    summary: str = ""
    changes: int = 0
    text: str = ""
    session_id: str = ""


@_event("checkpoint")
class Checkpoint(Event):
    """A turn's checkpoint was taken, undone or redone, or files diverged from it (on resume).

    ``action``: "taken" | "undone" | "redone" | "diverged". ``turn``: the session's turn number
    (0 for "diverged"); ``turn_id`` is that turn's id when known. ``files``: the paths the turn
    changed (for "diverged": the paths that differ from the last checkpoint). ``undo_turn`` and
    ``redo_turn``: the turn /undo and /redo would act on now (None: nothing to undo or redo).
    For "undone" and "redone": ``names``, the kernel variables bound again (or removed), and
    ``not_restored``, what could not be ("df (changed in place)"). For an "undone" with something not
    restored: ``replay``, the restart-and-replay plan on offer (run only on the user's confirmation), one
    object per cell: ``execution_count``, ``cell_id`` (None: not in the notebook), ``seconds`` (None: not
    timed), ``origin`` ("history", "notebook", "history+notebook") and ``line`` (the code's first line).
    """

    action: str = "taken"
    turn: int = 0
    files: list[str] = field(default_factory=list)
    undo_turn: int | None = None
    redo_turn: int | None = None
    names: list[str] = field(default_factory=list)
    not_restored: list[str] = field(default_factory=list)
    replay: list[dict[str, Any]] = field(default_factory=list)


@_event("kernel_changed")
class KernelChanged(Event):
    """What a kernel-changing call (kernel_run, notebook_run) did to the user's kernel namespace.

    ``added``, ``rebound`` (bound to another object) and ``deleted`` are names; ``mutated``: the same
    object, changed in place (its fingerprint differs); ``unchecked``: the same object, which could not
    be fingerprinted within the budget (it may or may not have changed). ``dropped``: names (with their
    turn, "df (turn 3)") whose old values the undo record's memory cap released by this call: undo can no
    longer bind them again.
    """

    call_id: str = ""
    added: list[str] = field(default_factory=list)
    rebound: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


@_event("kernel_replayed")
class KernelReplayed(Event):
    """Restart and replay ran, on the user's confirmation, after the undo of ``turn``: the kernel's
    variables were cleared and the plan's cells run in order. ``ran``: the execution counts of the cells
    that ran without error; ``failed``: the cell it stopped at (None: all ran), with its notebook cell id
    (``failed_cell_id``, None when not in the notebook) and ``error``.
    """

    turn: int = 0
    ran: list[int] = field(default_factory=list)
    failed: int | None = None
    failed_cell_id: str | None = None
    error: str | None = None


@_event("turn_end")
class TurnEnd(Event):
    """The end of a prompt, exactly once per prompt: a queued prompt dropped by Abort ends with
    ``reason="aborted"`` and no turn_start before it."""

    reason: str = "done"
    text: str = ""
    steps: int = 0


@_event("error")
class Error(Event):
    """Something went wrong; ``kind`` is machine-readable (auth, not_found, rate_limit, ...)."""

    message: str = ""
    kind: str = "error"
    status_code: int | None = None


__all__ = ["ApprovalDecision", "ApprovalRequest", "Checkpoint", "Compacted", "ContextNote", "Error", "Event",
           "KernelChanged", "KernelReplayed", "MemoryChanged", "MemoryInjected", "PromptQueued", "ReasoningDelta",
           "SessionChanged", "SettingsChanged", "TextDelta", "TodosChanged", "ToolCall", "ToolInputDelta",
           "ToolInputStart", "ToolResult", "TurnEnd", "TurnStart", "Usage", "event_from_dict"]
"""The public names (docs/python-api.md, "Public modules"): the event classes, their base, and the decoder."""


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from ``to_dict()`` output; unknown keys are ignored."""
    cls = EVENT_TYPES.get(data.get("type", ""))
    if cls is None:
        raise ValueError(f"unknown event type: {data.get('type')!r}")
    names = {f.name for f in fields(cls) if f.init}
    return cls(**{k: v for k, v in data.items() if k in names})


AnyEvent = (
    TurnStart | PromptQueued | ReasoningDelta | TextDelta | ToolInputStart | ToolInputDelta
    | ToolCall | ApprovalRequest | ApprovalDecision | ToolResult | TodosChanged | MemoryChanged
    | MemoryInjected | SettingsChanged | SessionChanged | Usage | Compacted | KernelChanged | TurnEnd | Error
)
