"""The one typed event stream that every front end renders.

Each event is a small frozen dataclass whose ``type`` is a ``Literal``; ``AnyEvent`` is their one
union (what front ends handle and scripts/gen_types.py turns into the panel's TypeScript ``AgentEvent``).
``to_dict()`` gives plain JSON-serialisable data (the server extension sends it over a WebSocket
unchanged) and ``event_from_dict()`` turns it back into the dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar, Union, dataclass_transform, get_args

# The vocabularies of the wire: a field whose values come from a fixed set is typed with one of these,
# so the generated TypeScript says ``status: ToolStatus`` ('done' | 'failed' | ...), not ``string``.
TurnEndReason = Literal["done", "aborted", "error", "max_steps"]
ToolStatus = Literal["done", "failed", "denied", "killed", "interrupted"]
Decision = Literal["approve", "deny", "always"]
"""An answer to an approval_request (nbagent.tools.approvals)."""
DecidedBy = Literal["user", "always", "read-only mode", "no one to ask", "cancelled"]
"""Who decided: someone was asked ("user"), an earlier "always", the read-only mode, nobody could be
asked, or the asking call was cancelled (an outside MCP agent gave up)."""
ApprovalMode = Literal["ask", "auto", "read-only", "sandboxed"]
"""The agent's approval mode (AgentConfig.approval; docs/tools.md, "Approvals")."""
ApprovalPolicy = Literal["never", "ask", "always_ask"]
"""A tool's approval policy (Tool.approval, AgentConfig.tool_approvals)."""
MemoryAction = Literal["remember", "recall", "forget", "compact"]
ContextChange = Literal["attached", "updated", "failing", "removed"]
CheckpointAction = Literal["taken", "undone", "redone", "diverged"]

VOCABULARIES: dict[str, Any] = {
    "TurnEndReason": TurnEndReason, "ToolStatus": ToolStatus, "Decision": Decision, "DecidedBy": DecidedBy,
    "ApprovalMode": ApprovalMode, "ApprovalPolicy": ApprovalPolicy, "MemoryAction": MemoryAction,
    "ContextChange": ContextChange, "CheckpointAction": CheckpointAction,
}
"""Each vocabulary by name: scripts/gen_types.py writes them as named TypeScript types and constants."""


@dataclass(frozen=True)
class Event:
    """Base of all events. ``turn_id`` ties an event to the turn that made it."""

    type: str = field(init=False, default="event")
    turn_id: str = field(default="", kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        # A shallow copy is enough: every field holds JSON data already,
        # and asdict()'s deep copy costs ~10x more on hot deltas.
        # ``type`` lives on the class (an init=False default), so add it here.
        return {"type": self.type, **self.__dict__}


_E = TypeVar("_E", bound=type[Event])


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _event(cls: _E) -> _E:
    """Class decorator: a frozen dataclass; its ``type`` field (a ``Literal`` with that default) names it."""
    return dataclass(frozen=True)(cls)


@_event
class TurnStart(Event):
    type: Literal["turn_start"] = field(init=False, default="turn_start")
    prompt: str = ""
    session_id: str | None = None
    title: str | None = None
    """The session's title once this turn has begun (the first prompt names a session)."""


@_event
class PromptQueued(Event):
    """A prompt submitted while a turn runs; ``position`` counts from 1."""

    type: Literal["prompt_queued"] = field(init=False, default="prompt_queued")
    prompt: str = ""
    position: int = 0


@_event
class ReasoningDelta(Event):
    type: Literal["reasoning_delta"] = field(init=False, default="reasoning_delta")
    text: str = ""


@_event
class TextDelta(Event):
    type: Literal["text_delta"] = field(init=False, default="text_delta")
    text: str = ""


@_event
class ToolInputStart(Event):
    """The model has started a tool call: its name is known, its arguments are not yet."""

    type: Literal["tool_input_start"] = field(init=False, default="tool_input_start")
    name: str = ""
    call_id: str = ""


@_event
class ToolInputDelta(Event):
    type: Literal["tool_input_delta"] = field(init=False, default="tool_input_delta")
    name: str = ""
    call_id: str = ""
    text: str = ""


@_event
class ToolCall(Event):
    type: Literal["tool_call"] = field(init=False, default="tool_call")
    name: str = ""
    call_id: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


@_event
class ApprovalRequest(Event):
    """The turn waits for a decision on this call; ``diff`` previews an edit.

    ``annotations``: an MCP tool's hints as its server declares them (readOnlyHint, destructiveHint,
    idempotentHint, openWorldHint, title), shown to the user, never trusted to skip the question."""

    type: Literal["approval_request"] = field(init=False, default="approval_request")
    name: str = ""
    call_id: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    diff: str | None = None
    annotations: dict[str, Any] | None = None


@_event
class ApprovalDecision(Event):
    type: Literal["approval_decision"] = field(init=False, default="approval_decision")
    name: str = ""
    call_id: str = ""
    decision: Decision = "approve"
    by: DecidedBy = "user"


@_event
class ToolResult(Event):
    """The end of a call, exactly once per call: ``status`` is done, failed, denied, killed (Stop), or
    interrupted (the turn was aborted before the call finished)."""

    type: Literal["tool_result"] = field(init=False, default="tool_result")
    name: str = ""
    call_id: str = ""
    output: str = ""
    is_error: bool = False
    status: ToolStatus = "done"
    duration_ms: float = 0.0


@_event
class TodosChanged(Event):
    type: Literal["todos_changed"] = field(init=False, default="todos_changed")
    todos: list[dict[str, Any]] = field(default_factory=list)


@_event
class MemoryChanged(Event):
    type: Literal["memory_changed"] = field(init=False, default="memory_changed")
    action: MemoryAction = "remember"
    entries: list[dict[str, Any]] = field(default_factory=list)


@_event
class MemoryInjected(Event):
    """The project-memory entries this turn's prompt carries (each a dict: id, kind, text, and where
    known ``score`` and ``why``)."""

    type: Literal["memory_injected"] = field(init=False, default="memory_injected")
    entries: list[dict[str, Any]] = field(default_factory=list)


@_event
class SettingsChanged(Event):
    """``Agent.reconfigure`` changed settings of the live agent: the new values of what changed."""

    type: Literal["settings_changed"] = field(init=False, default="settings_changed")
    settings: dict[str, Any] = field(default_factory=dict)


@_event
class SessionChanged(Event):
    """The agent moved to another session (new, resume, fork): ``state`` is the whole new AgentState
    (as ``to_dict()``), which replaces the old one in every front end."""

    type: Literal["session_changed"] = field(init=False, default="session_changed")
    session_id: str = ""
    state: dict[str, Any] = field(default_factory=dict)


@_event
class Usage(Event):
    """Tokens of one model call, and the session's running totals."""

    type: Literal["usage"] = field(init=False, default="usage")
    input_tokens: int = 0
    output_tokens: int = 0
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    cost: float | None = None
    cached_tokens: int = 0
    """Of input_tokens, those the provider read from its prompt cache (0 when it does not say)."""
    total_cached_tokens: int = 0
    image_tokens: int = 0
    """Of input_tokens, nbagent's estimate for the images the request carried (OpenAI's tile rule,
    nbagent.images.estimate_tokens): providers do not report them apart."""
    total_image_tokens: int = 0


@_event
class Compacted(Event):
    type: Literal["compacted"] = field(init=False, default="compacted")
    before: int = 0
    after: int = 0
    message: str = ""


@_event
class ContextNote(Event):
    """An attached source's note, added to the history before a turn (nbagent.attached).

    ``change`` is attached, updated, failing or removed; ``changes`` counts the revisions since the
    model last saw the source; ``text`` is the note as the model reads it."""

    type: Literal["context_note"] = field(init=False, default="context_note")
    source: str = ""
    note_id: str = ""
    change: ContextChange = "updated"
    summary: str = ""
    changes: int = 0
    text: str = ""
    session_id: str = ""


@_event
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

    type: Literal["checkpoint"] = field(init=False, default="checkpoint")
    action: CheckpointAction = "taken"
    turn: int = 0
    files: list[str] = field(default_factory=list)
    undo_turn: int | None = None
    redo_turn: int | None = None
    names: list[str] = field(default_factory=list)
    not_restored: list[str] = field(default_factory=list)
    replay: list[dict[str, Any]] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    """For an "undone" or "redone" of part of a turn (its review, docs/notebooks.md "Reviewing a turn"):
    the ids of the change rows taken back or re-applied; empty for the whole turn."""


@_event
class ChangesReviewed(Event):
    """Rows of a turn's changes were kept, undone or redone (docs/notebooks.md, "Reviewing a turn"), or a
    suggestion was recorded: one event per path touched. ``session`` and ``turn`` name the turn, ``path``
    the workspace-relative file, ``pending`` how many of that turn's rows for the path still await review
    (pending or suggested). A front end re-reads ``GET /nbagent/api/changes`` on it."""

    type: Literal["changes"] = field(init=False, default="changes")
    session: str = ""
    turn: int = 0
    path: str = ""
    pending: int = 0


@_event
class KernelChanged(Event):
    """What a kernel-changing call (kernel_run, notebook_run) did to the user's kernel namespace.

    ``added``, ``rebound`` (bound to another object) and ``deleted`` are names; ``mutated``: the same
    object, changed in place (its fingerprint differs); ``unchecked``: the same object, which could not
    be fingerprinted within the budget (it may or may not have changed). ``dropped``: names (with their
    turn, "df (turn 3)") whose old values the undo record's memory cap released by this call: undo can no
    longer bind them again.
    """

    type: Literal["kernel_changed"] = field(init=False, default="kernel_changed")
    call_id: str = ""
    added: list[str] = field(default_factory=list)
    rebound: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


@_event
class KernelReplayed(Event):
    """Restart and replay ran, on the user's confirmation, after the undo of ``turn``: the kernel's
    variables were cleared and the plan's cells run in order. ``ran``: the execution counts of the cells
    that ran without error; ``failed``: the cell it stopped at (None: all ran), with its notebook cell id
    (``failed_cell_id``, None when not in the notebook) and ``error``.
    """

    type: Literal["kernel_replayed"] = field(init=False, default="kernel_replayed")
    turn: int = 0
    ran: list[int] = field(default_factory=list)
    failed: int | None = None
    failed_cell_id: str | None = None
    error: str | None = None


@_event
class TurnEnd(Event):
    """The end of a prompt, exactly once per prompt: a queued prompt dropped by Abort ends with
    ``reason="aborted"`` and no turn_start before it."""

    type: Literal["turn_end"] = field(init=False, default="turn_end")
    reason: TurnEndReason = "done"
    text: str = ""
    steps: int = 0


@_event
class Error(Event):
    """Something went wrong; ``kind`` is machine-readable (auth, not_found, rate_limit, ...)."""

    type: Literal["error"] = field(init=False, default="error")
    message: str = ""
    kind: str = "error"
    status_code: int | None = None


AnyEvent = Union[
    TurnStart, PromptQueued, ReasoningDelta, TextDelta, ToolInputStart, ToolInputDelta, ToolCall,
    ApprovalRequest, ApprovalDecision, ToolResult, TodosChanged, MemoryChanged, MemoryInjected,
    SettingsChanged, SessionChanged, Usage, Compacted, ContextNote, Checkpoint, ChangesReviewed, KernelChanged,
    KernelReplayed, TurnEnd, Error,
]
"""Every event: what front ends render and what the generated TypeScript calls ``AgentEvent``.
tests/architecture/test_events_union.py fails when an event class of this module is missing from it."""

EVENT_TYPES: dict[str, type[AnyEvent]] = {cls.type: cls for cls in get_args(AnyEvent)}
"""Each event class by its ``type``, in the union's order."""


__all__ = ["ApprovalDecision", "ApprovalRequest", "ChangesReviewed", "Checkpoint", "Compacted", "ContextNote", "Error", "Event",
           "KernelChanged", "KernelReplayed", "MemoryChanged", "MemoryInjected", "PromptQueued", "ReasoningDelta",
           "SessionChanged", "SettingsChanged", "TextDelta", "TodosChanged", "ToolCall", "ToolInputDelta",
           "ToolInputStart", "ToolResult", "TurnEnd", "TurnStart", "Usage", "event_from_dict",
           "AnyEvent", "EVENT_TYPES", "VOCABULARIES", "TurnEndReason", "ToolStatus", "Decision", "DecidedBy",
           "ApprovalMode", "ApprovalPolicy", "MemoryAction", "ContextChange", "CheckpointAction"]
"""The public names (docs/python-api.md, "Public modules"): the event classes, their base, their union, the decoder and the vocabularies."""


def event_from_dict(data: dict[str, Any]) -> AnyEvent:
    """Rebuild an event from ``to_dict()`` output; unknown keys are ignored."""
    cls = EVENT_TYPES.get(data.get("type", ""))
    if cls is None:
        raise ValueError(f"unknown event type: {data.get('type')!r}")
    names = {f.name for f in fields(cls) if f.init}
    return cls(**{k: v for k, v in data.items() if k in names})
