"""TurnView: the live view of one turn, built from its events.

Events may arrive on any thread (the agent calls subscribers on its own); ``handle`` only stamps
and stores them and asks the throttle for a flush. ``flush`` folds what came since the last flush
and applies it inside ``hold_sync`` on every widget of the view, so each changed widget sends one
message per flush, at most about ten flushes a second.
"""

from __future__ import annotations

import contextlib
import html
import threading
import time
from typing import Callable

import ipywidgets as widgets
from traitlets import Unicode

from ... import events as ev
from ...context.notes import note_line
from .answer import Answer
from .approval import ApprovalCard
from .checkpoint import CheckpointBar
from .coalesce import Stamped, coalesce
from .controls import Controls
from .header import Header
from .memory import Memory
from .reasoning import Reasoning
from .throttle import Throttle
from .timeline import Timeline
from .todos import Todos
from .tools import ToolCalls

# At most ~7 flushes a second: each flush may send a message per changed widget (answer,
# tool rows, header), and the budget is ~30 frontend messages a second in all.
FLUSH_INTERVAL = 0.15


class TurnView(widgets.VBox):
    turn_id = Unicode("")
    prompt = Unicode("")
    state = Unicode("waiting")
    """waiting (submitted), queued, running, then the turn_end reason: done, aborted, error, max_steps."""

    def __init__(self, *, turn_id: str = "", prompt: str = "", decide: Callable[[str, str], None] | None = None,
                 stop: Callable[[], object] = lambda: None, abort: Callable[[], object] = lambda: None,
                 act: Callable[[str, int], object] | None = None, interval: float = FLUSH_INTERVAL, **header):
        self.header = Header(**header)
        self.prompt_line = widgets.HTML(_prompt_html(prompt))
        self.reasoning = Reasoning()
        self.answer = Timeline()
        """The answer's paragraphs with the tool rows between them, in the order they happened."""
        self.tools = ToolCalls(place=self.answer.add)
        self.approvals = widgets.VBox()
        self.todos = Todos()
        self.memory = Memory()
        self.notes = widgets.HTML()
        self.controls = Controls(stop=stop, abort=abort)
        self.checkpoint = CheckpointBar(act)
        super().__init__(children=(self.header, self.prompt_line, self.reasoning, self.answer, self.tools,
                                   self.approvals, self.todos, self.memory, self.notes, self.checkpoint,
                                   self.controls),
                         turn_id=turn_id, prompt=prompt)
        self.add_class("nbagent-turn")
        self.cards: dict[str, ApprovalCard] = {}
        self._decide = decide or (lambda call_id, decision: None)
        self._pending: list[Stamped] = []
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self.throttle = Throttle(self.flush, interval)
        self.flushes = 0
        self._set_state("waiting")

    # ----- input (any thread) ----------------------------------------------------------------
    def handle(self, event: ev.Event) -> None:
        with self._lock:
            self._pending.append((time.monotonic(), event))
        if isinstance(event, (ev.TurnEnd, ev.ApprovalRequest)):
            self.throttle.flush_now()  # the end and a waiting turn must show at once
        else:
            self.throttle.request()

    def set_queued(self, count: int) -> None:
        """The number of prompts waiting behind the running turn (the hub calls this)."""
        self._local(_QueueCount(count))

    def set_header(self, **fields) -> None:
        """Header fields known outside the event stream (session title, model)."""
        self._local(_HeaderFields(fields))

    def _local(self, item) -> None:
        with self._lock:
            self._pending.append((time.monotonic(), item))
        self.throttle.request()

    def __repr__(self) -> str:  # the text/plain of the view, for frontends without widgets
        return f"<nbagent turn ({self.state}): {self.prompt[:60]}>"

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    # ----- output (the throttle's thread, or a caller's) -------------------------------------
    def flush(self) -> int:
        """Apply what is pending; returns the number of widget messages it sends (one per changed widget)."""
        with self._lock:
            batch, self._pending = self._pending, []
        if not batch:
            return 0
        self.flushes += 1
        with _held(self) as held:
            for at, event in coalesce(batch):
                self._apply(at, event)
            return sum(1 for widget in held if getattr(widget, "_states_to_send", None))

    def _apply(self, at: float, event) -> None:
        if not isinstance(event, (ev.ReasoningDelta, _QueueCount, _HeaderFields, ev.Usage)):
            self.reasoning.pause(at)
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, at, event)

    def _turn_start(self, at, e: ev.TurnStart) -> None:
        self.header.session_id = e.session_id or self.header.session_id
        self._set_state("running")

    def _queued(self, at, e: ev.PromptQueued) -> None:
        if self.state == "waiting":
            self._set_state("queued", f"queued (position {e.position})")

    def _tool_call(self, at, e: ev.ToolCall) -> None:
        self.tools.called(e.call_id, e.name, e.arguments)

    def _approval_request(self, at, e: ev.ApprovalRequest) -> None:
        self.tools.called(e.call_id, e.name, e.arguments)
        self.tools.waiting(e.call_id, e.diff)
        card = ApprovalCard(call_id=e.call_id, name=e.name, arguments=e.arguments, diff=e.diff,
                            decide=self._decide)
        self.cards[e.call_id] = card
        self.approvals.children = (*self.approvals.children, card)

    def _approval_decision(self, at, e: ev.ApprovalDecision) -> None:
        card = self.cards.pop(e.call_id, None)
        if card is not None:
            card.settle(e.decision, e.by)
            self.approvals.children = tuple(c for c in self.approvals.children if c is not card)
        if e.decision != "deny":
            self.tools.approved(e.call_id)

    def _usage(self, at, e: ev.Usage) -> None:
        self.header.input_tokens, self.header.output_tokens = e.total_input_tokens, e.total_output_tokens
        self.header.cost = e.cost

    def _note(self, text: str, colour: str = "#666") -> None:
        self.notes.value += f'<div style="font-size:12px;color:{colour}">{html.escape(text)}</div>'

    def _turn_end(self, at, e: ev.TurnEnd) -> None:
        self.reasoning.drop(at)
        self.tools.turn_ended()
        for card in self.cards.values():
            card.settle("deny", "turn ended")
        self.cards.clear()
        self.approvals.children = ()
        if not self.answer.markdown and e.text:
            self.answer.append(e.text)
        if e.reason != "done":
            self._note(f"turn ended: {e.reason}", "#cf222e" if e.reason == "error" else "#9a6700")
        self._set_state(e.reason)
        self._ended.set()

    def _set_state(self, state: str, label: str | None = None) -> None:
        self.state = state
        self.header.status = label or state
        self.controls.running = state in ("waiting", "queued", "running")


class _QueueCount:
    def __init__(self, count: int):
        self.count = count


class _HeaderFields(dict):
    pass


_HANDLERS: dict[type, Callable] = {
    ev.TurnStart: TurnView._turn_start,
    ev.PromptQueued: TurnView._queued,
    ev.ReasoningDelta: lambda v, at, e: v.reasoning.add(e.text, at),
    ev.TextDelta: lambda v, at, e: v.answer.append(e.text),
    ev.ToolInputStart: lambda v, at, e: v.tools.started(e.call_id, e.name),
    ev.ToolCall: TurnView._tool_call,
    ev.ApprovalRequest: TurnView._approval_request,
    ev.ApprovalDecision: TurnView._approval_decision,
    ev.ToolResult: lambda v, at, e: v.tools.finished(e.call_id, e.name, e.status, e.output),
    ev.TodosChanged: lambda v, at, e: setattr(v.todos, "todos", list(e.todos)),
    ev.MemoryChanged: lambda v, at, e: v.memory.changed(e.action, e.entries),
    ev.MemoryInjected: lambda v, at, e: v.memory.changed("injected", e.entries),
    ev.Usage: TurnView._usage,
    ev.Compacted: lambda v, at, e: v._note(e.message or f"compacted: {e.before} → {e.after} messages"),
    ev.ContextNote: lambda v, at, e: v._note(note_line(e.source, e.change, e.summary, e.changes)),
    ev.Checkpoint: lambda v, at, e: v.checkpoint.show(e),
    ev.Error: lambda v, at, e: v._note(f"error: {e.message}", "#cf222e"),
    ev.TurnEnd: TurnView._turn_end,
    _QueueCount: lambda v, at, e: setattr(v.controls, "queued", e.count),
    _HeaderFields: lambda v, at, e: [setattr(v.header, k, val) for k, val in e.items() if val],
}


@contextlib.contextmanager
def _held(root: widgets.Widget):
    """hold_sync on every widget of the tree: each one sends at most one update when this exits."""
    with contextlib.ExitStack() as stack:
        held = list(_tree(root))
        for widget in held:
            stack.enter_context(widget.hold_sync())
        yield held


def _tree(widget: widgets.Widget):
    yield widget
    layout = getattr(widget, "layout", None)
    if layout is not None:
        yield layout
    for child in getattr(widget, "children", ()):
        yield from _tree(child)


def _prompt_html(prompt: str) -> str:
    if not prompt:
        return ""
    short = prompt if len(prompt) <= 300 else prompt[:299] + "…"
    return f'<div style="font-size:12px;color:var(--jp-ui-font-color2,#666)">› {html.escape(short)}</div>'
