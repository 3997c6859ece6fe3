"""TurnView: the live view of one turn, rendered from the agent's state (agent_state.AgentState).

The view registry reduces every event of the agent onto one LiveState and hands each view the new
state (``update``); a view fed bare events (``handle``) reduces them onto its own. Either way the view
only keeps the newest state and asks the throttle for a flush; ``flush`` renders what differs from the
state it rendered last (unchanged parts are the same objects, so the checks are identity checks),
inside ``hold_sync`` on every widget of the view, so each changed widget sends one message per flush.
A view made mid-turn starts from the state as it is, so it shows what a view there from the start shows.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, NamedTuple

import ipywidgets as widgets
from traitlets import Unicode

from ... import events as ev
from ...render.agent_state import AgentState, Counters, PendingApproval, ToolItem, Turn
from ...render.escape import escape_html, truncate
from .approval import ApprovalCard
from .checkpoint import CheckpointBar
from .controls import Controls
from .header import Header, question_line
from .live_state import LiveState
from .memory import Memory
from .notice import notice_html
from .throttle import Throttle
from .timeline import Timeline
from .todos import Todos
from .tools import ToolRow

# At most ~7 flushes a second: each flush may send a message per changed widget (a paragraph, a tool
# row, the header), and the budget is ~30 frontend messages a second in all.
FLUSH_INTERVAL = 0.15
ACTIVE = ("waiting", "queued", "running")
"""The view's states before its turn ends (then it takes the turn's end reason)."""


class Shown(NamedTuple):
    """The part of the agent's state one turn's view renders."""

    turn: Turn | None
    status: str
    label: str
    approvals: tuple[PendingApproval, ...]
    queued: int
    todos: tuple[dict[str, Any], ...]
    counters: Counters
    session_id: str
    title: str
    model: str
    offline: bool
    mode: str = ""
    """The approval mode and whether the sandbox is on (tools.approvals.mode_line)."""


def _mode(settings: dict[str, Any]) -> str:
    if not settings.get("approval"):
        return ""
    sandbox = "sandbox on" if settings.get("sandbox_active") else "NO sandbox: commands are not confined"
    return f"{settings['approval']} · {sandbox}"


class TurnView(widgets.VBox):
    turn_id = Unicode("")
    prompt = Unicode("")
    state = Unicode("waiting")
    """waiting (submitted), queued, running, then the turn's end reason: done, aborted, error, max_steps."""

    def __init__(self, *, turn_id: str = "", prompt: str = "", decide: Callable[[str, str], None] | None = None,
                 stop: Callable[[], object] = lambda: None, abort: Callable[[], object] = lambda: None,
                 act: Callable[[str, Any], object] | None = None, interval: float = FLUSH_INTERVAL,
                 live: LiveState | None = None):
        self.live = live or LiveState()
        self.header = Header(question=prompt)
        self.prompt_line = widgets.HTML(_prompt_html(prompt))
        self.answer = Timeline()
        """The turn's items in the order they happened: paragraphs, reasoning, tool rows, notices."""
        self.approvals = widgets.VBox()
        self.todos = Todos()
        self.memory = Memory()
        self.notes = widgets.HTML()
        """How the turn ended, when not "done"."""
        self.controls = Controls(stop=stop, abort=abort)
        self.checkpoint = CheckpointBar(act)
        super().__init__(children=(self.header, self.prompt_line, self.answer, self.approvals, self.todos,
                                   self.memory, self.notes, self.checkpoint, self.controls),
                         turn_id=turn_id, prompt=prompt)
        self.add_class("nbagent-turn")
        self.cards: dict[str, ApprovalCard] = {}
        self._decide = decide or (lambda call_id, decision: None)
        self._lock = threading.Lock()
        self._render_lock = threading.RLock()
        self._latest: AgentState = self.live.state
        self._end_reason: str | None = None
        """A prompt dropped from the queue ends without a turn in the state: its turn_end's reason."""
        self._shown: Shown | None = None
        self._ended = threading.Event()
        self._end_callbacks: list[Callable[[], object]] = []
        self.throttle = Throttle(self.flush, interval)
        self.flushes = 0
        self._render(self._project(self._latest))

    # ----- input (any thread) ----------------------------------------------------------------
    def handle(self, event: ev.AnyEvent) -> None:
        """Apply one event to this view's own state (a view with no registry, as in tests)."""
        self.update(self.live.apply(event), event)

    def update(self, state: AgentState, event: ev.Event | None = None) -> None:
        """Render ``state`` soon: at once when ``event`` ends this turn or makes it wait (an approval)."""
        mine = event is not None and event.turn_id == self.turn_id
        with self._lock:
            self._latest = state
            if mine and isinstance(event, ev.TurnEnd):
                self._end_reason = event.reason
        if mine and isinstance(event, (ev.TurnEnd, ev.ApprovalRequest, ev.Checkpoint)):
            self.throttle.flush_now()
        else:
            self.throttle.request()

    def __repr__(self) -> str:  # the text/plain of the view, for frontends without widgets
        head = f"<nbagent turn ({self.state}): {self.prompt[:60]}>"
        shown = self._shown
        if shown is not None and shown.status not in ACTIVE and shown.turn is not None and shown.turn.text:
            return f"{head}\n{shown.turn.text}"  # what a stored notebook shows where widgets do not render
        return head

    def on_end(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once the turn has ended and its final state is rendered (at once if it has):
        the kernel updates the displayed view then, so its text/plain is the final state, not "waiting"."""
        with self._render_lock:
            if not self.ended:
                self._end_callbacks.append(callback)
                return
        callback()

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    @property
    def rows(self) -> dict[str, ToolRow]:
        """The turn's tool rows by call id."""
        return self.answer.rows

    # ----- output (the throttle's thread, or a caller's) -------------------------------------
    def flush(self) -> int:
        """Render the newest state; returns the number of widget messages it sends (one per changed widget)."""
        with self._render_lock:
            with self._lock:
                state = self._latest
            shown = self._project(state)
            if shown == self._shown:
                return 0
            self.flushes += 1
            with _held(self) as held:
                self._render(shown)
                sent = sum(1 for widget in held if getattr(widget, "_states_to_send", None))
            # A widget made by this flush (a new paragraph or row) sent its opening and first state itself.
            return sent + 2 * (sum(1 for _ in _tree(self)) - len(held))

    def _project(self, state: AgentState) -> Shown:
        turn, status, label = self._locate(state)
        previous = self._shown
        if previous is not None and previous.status not in ACTIVE:
            # A finished turn's view stays as it ended; only its checkpoint (Undo/Redo) changes.
            return previous._replace(turn=turn) if turn is not None else previous
        approvals = tuple(a for a in state.approvals if a.turn_id == self.turn_id)
        return Shown(turn=turn, status=status, label=label, approvals=approvals, queued=len(state.queue),
                     todos=state.todos, counters=state.counters, session_id=state.session_id or "",
                     title=state.title or "", model=str(state.settings.get("model") or ""),
                     offline=bool(state.settings.get("offline")),
                     mode=_mode(state.settings))

    def _locate(self, state: AgentState) -> tuple[Turn | None, str, str]:
        """This view's turn in the state, with its status and the header's word for it."""
        if state.turn is not None and state.turn.turn_id == self.turn_id:
            return state.turn, "running", "running"
        for position, queued in enumerate(state.queue, start=1):
            if queued.turn_id == self.turn_id:
                return None, "queued", f"queued (position {position})"
        for turn in reversed(state.transcript):
            if turn.turn_id == self.turn_id:
                return turn, turn.status, turn.status
        if self._end_reason is not None:
            return None, self._end_reason, self._end_reason
        return None, "waiting", "waiting"

    def _render(self, shown: Shown) -> None:
        old, self._shown = self._shown, shown
        ended = shown.status not in ACTIVE
        header = self.header
        header.session_id, header.title, header.model = shown.session_id, shown.title, shown.model
        header.offline = shown.offline
        header.mode = shown.mode
        header.input_tokens, header.output_tokens = shown.counters.input_tokens, shown.counters.output_tokens
        header.cached_tokens, header.image_tokens = shown.counters.cached_tokens, shown.counters.image_tokens
        header.cost, header.status = shown.counters.cost, shown.label
        turn = shown.turn
        if turn is not None:
            thinking = lambda index: self.live.thinking_seconds(self.turn_id, index)  # noqa: E731
            self.answer.render(turn.items, ended, turn.text, thinking)
            self.memory.injected = list(turn.memory)
            if turn.checkpoint is not None and (old is None or old.turn is None or
                                                old.turn.checkpoint is not turn.checkpoint):
                self.checkpoint.show(turn.checkpoint)
        if old is None or shown.todos is not old.todos:
            self.todos.todos = list(shown.todos)
        if old is None or shown.approvals != old.approvals:
            self._render_cards(shown.approvals, turn)
        self.notes.value = notice_html(f"turn ended: {shown.status}", "#cf222e" if shown.status == "error"
                                       else "#9a6700") if ended and shown.status != "done" else ""
        self.controls.queued, self.controls.running = shown.queued, not ended
        self.state = shown.status
        if ended and not self._ended.is_set():
            self._ended.set()
            callbacks, self._end_callbacks = self._end_callbacks, []
            for callback in callbacks:
                callback()

    def _render_cards(self, pending: tuple[PendingApproval, ...], turn: Turn | None) -> None:
        """A card per approval the turn waits for; a card whose decision came (from anywhere) goes."""
        waiting = {a.call_id for a in pending}
        for call_id in [c for c in self.cards if c not in waiting]:
            card = self.cards.pop(call_id)
            if not card.decision:  # decided elsewhere (the panel, code, the mode), or the turn ended
                decision, by = _decision_of(turn, call_id)
                card.settle(decision or "deny", by or "turn ended")
        for approval in pending:
            if approval.call_id not in self.cards:
                self.cards[approval.call_id] = ApprovalCard(
                    call_id=approval.call_id, name=approval.name, arguments=approval.arguments,
                    diff=approval.diff, decide=self._decide)
        self.approvals.children = tuple(self.cards[a.call_id] for a in pending)


def _decision_of(turn: Turn | None, call_id: str) -> tuple[str | None, str | None]:
    """The decision on a call and who made it, from the turn's tool item."""
    for item in () if turn is None else turn.items:
        if isinstance(item, ToolItem) and item.call_id == call_id:
            return item.decision, item.decided_by
    return None, None


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
    if not prompt or question_line(prompt) == prompt.strip():  # the header shows all of it
        return ""
    return f'<div style="font-size:12px;color:var(--jp-ui-font-color2,#666)">› {escape_html(truncate(prompt, 300))}</div>'
