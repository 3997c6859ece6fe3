"""The shared text renderer of the CLI, the kernel's text view and nbagent mcp serve: events as terminal text.

``TerminalRenderer.render(event)`` returns what to print for one event as two strings: ``answer`` (the
model's text, for stdout) and ``activity`` (tools, approvals, todos, errors, for stderr or the same
stream); ``.text`` joins them in order. Paragraphs of different model steps are kept apart by a blank
line. With ``markdown=True`` (stdout is a terminal) each finished Markdown block of the answer is
rendered for the terminal by ``rich``; otherwise the answer streams as the model wrote it.

``approval_card`` shows the whole call awaiting approval (every argument in full, and the diff);
nbagent.tools.terminal_approver asks for the decision after it. Everything that nbagent did not
write itself goes through ``render.escape.escape_controls`` before it reaches the terminal.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, TextIO

from .. import events as ev
from .agent_state import (AgentState, NoticeItem, PendingApproval, ReasoningItem, TextItem, ToolItem, Turn, reduce)
from .escape import escape_controls, truncate
from .text import STATUS_MARKS, TODO_MARKS, counts_line_for, kernel_line, key_argument, summarize_arguments


@dataclass(frozen=True)
class Rendered:
    """What one event prints, in order: parts of the answer (the model's text) and of the activity."""

    parts: tuple[tuple[str, str], ...] = ()
    """("answer" | "activity", text) pairs."""

    @property
    def answer(self) -> str:
        return "".join(text for kind, text in self.parts if kind == "answer")

    @property
    def activity(self) -> str:
        return "".join(text for kind, text in self.parts if kind == "activity")

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.parts)


class TerminalRenderer:
    """Prints what changes in an agent's state, event by event.

    It keeps an ``AgentState`` (from ``Agent.snapshot()`` or ``Agent.watch()``; empty by default) and
    applies every event with ``agent_state.reduce``, the rules every front end shares; what it prints is
    the difference between the state before and after. So a terminal that joins while a turn runs shows
    that turn so far (``catch_up``) and then follows it exactly as one that was there from the start.
    With ``follow`` set to a turn id, only that turn's changes are printed (the state still takes every
    event). ``show_prompt`` prints each turn's prompt when it starts (the text view; the CLI's user typed it).
    """

    def __init__(self, *, markdown: bool = False, width: int | None = None, show_reasoning: bool = False,
                 quiet: bool = False, state: AgentState | None = None, follow: str | None = None,
                 show_prompt: bool = False):
        self.show_reasoning = show_reasoning
        self.quiet = quiet
        """Only the answer, approval cards and errors: no tool activity."""
        self.state = state if state is not None else AgentState()
        self.follow = follow
        self.show_prompt = show_prompt
        self._answer = _MarkdownAnswer(width) if markdown else _PlainAnswer()
        self._markdown = markdown
        self._open_text: int | None = None  # the index of the text item the answer is streaming
        self._activity_column = 0
        self._thinking_since: float | None = None
        self._thought = 0.0

    def render(self, event: ev.AnyEvent) -> Rendered:
        """Apply ``event`` to the state; what it changed, as text."""
        before, self.state = self.state, reduce(self.state, event)
        if self.follow is not None and event.turn_id != self.follow:
            return Rendered()
        return self._changes(before, self.state, event)

    def catch_up(self) -> Rendered:
        """The turn in flight so far, and the queue unless following one turn (a view that joins late
        prints this first)."""
        state = self.state
        if self.follow is not None and (state.turn is None or state.turn.turn_id != self.follow):
            return Rendered()
        queue = state.queue if self.follow is not None else ()
        return self._changes(replace(state, turn=None, approvals=(), queue=queue, todos=()), state, None)

    # ----- the difference between two states ------------------------------------------------------
    def _changes(self, before: AgentState, after: AgentState, event: ev.Event | None) -> Rendered:
        out = _Output(self._close_answer)
        turn_id = event.turn_id if event is not None and event.turn_id else (after.turn.turn_id
                                                                              if after.turn else "")
        old, new = _turn_of(before, turn_id), _turn_of(after, turn_id)
        if new is not None and old is None and self.show_prompt:
            out.note(self._line(f"» {escape_controls(new.prompt)}"))
        if event is None:  # catching up: the queue and the todo list, then the turn so far
            self._state_lines(before, after, event, out)
        if new is not None and new is not old:
            if new.memory != (old.memory if old is not None else ()):  # catching up: before the items
                out.note(self._memory_lines(old, new))
            self._items(old.items if old is not None else (), new, after, event, out)
            mark = new.checkpoint
            if mark is not None and not mark.undone and mark != (old.checkpoint if old is not None else None):
                out.note(self._files_changed(mark.files))
        if event is not None:
            self._state_lines(before, after, event, out)
        if new is not None and new.status != "running" and (old is None or old.status == "running"):
            out.keep = True
            self._ended(new, out)
        return out.rendered(self.quiet)

    def _items(self, old_items: tuple, turn: Turn, state: AgentState, event: ev.Event | None,
               out: "_Output") -> None:
        for index, item in enumerate(turn.items):
            previous = old_items[index] if index < len(old_items) else None
            if previous is item:
                continue
            if isinstance(item, TextItem):
                if self._open_text != index:
                    out.say(self._close_answer())
                    self._open_text = index
                self._stop_thinking()
                out.say(self._answer.add(item.text[len(previous.text) if previous is not None else 0:]))
                continue
            out.say(self._close_answer())
            if isinstance(item, ReasoningItem):
                out.note(self._reasoning(previous, item))
                continue
            self._stop_thinking()
            if isinstance(item, ToolItem):
                out.note(self._tool(previous, item, state, event, out))
            elif isinstance(item, NoticeItem) and previous is None:
                out.note(self._notice(item, out))

    def _state_lines(self, before: AgentState, after: AgentState, event: ev.Event | None,
                     out: "_Output") -> None:
        """What changed outside the turn's items: the queue, todos, settings, notices, checkpoints.

        reduce keeps the parts an event leaves alone (the same objects), so a text delta costs only
        these identity checks."""
        if after.queue is not before.queue:
            known = {q.turn_id for q in before.queue}
            for position, queued in enumerate(after.queue, start=1):
                if queued.turn_id not in known:
                    out.note(self._line(f"[queued at position {position}: {_one_line(queued.prompt, 60)}]"))
        if after.todos is not before.todos:
            out.note(self._todos(after.todos))
        changed = {} if after.settings is before.settings else {
            k: v for k, v in after.settings.items() if before.settings.get(k, _MISSING) != v}
        if changed and after.session_id == before.session_id:
            pairs = ", ".join(f"{k}={v}" for k, v in changed.items())
            out.note(self._line(f"[settings: {_one_line(pairs, 200)}]"))
        if after.notices is not before.notices:
            known_notices = {id(n) for n in before.notices}
            for notice in after.notices:
                if id(notice) not in known_notices:
                    out.note(self._notice(notice, out))
        if isinstance(event, ev.Checkpoint) and event.action in ("undone", "redone"):
            out.note(self._checkpoint(event))  # "taken" is on its turn; "diverged" is a notice

    # ----- one part each ---------------------------------------------------------------------
    def _line(self, text: str) -> str:
        """A line of its own (after streamed reasoning, if any)."""
        prefix = "\n" if self._activity_column else ""
        self._activity_column = 0
        return f"{prefix}{text}\n"

    def _close_answer(self) -> str:
        self._open_text = None
        return self._answer.close()

    def _reasoning(self, previous: ReasoningItem | None, item: ReasoningItem) -> str:
        head = ""
        if previous is None:
            self._thinking_since = time.monotonic()
            head = self._line("thinking:" if self.show_reasoning else "thinking…")
        text = item.text[len(previous.text) if previous is not None else 0:]
        if not self.show_reasoning or not text:
            return head
        text = escape_controls(text)
        self._activity_column = len(text) - text.rfind("\n") - 1
        return head + text

    def _stop_thinking(self) -> None:
        if self._thinking_since is not None:
            self._thought += time.monotonic() - self._thinking_since
            self._thinking_since = None

    def _tool(self, previous: ToolItem | None, item: ToolItem, state: AgentState, event: ev.Event | None,
              out: "_Output") -> str:
        """A call's line when its arguments are known, its card while it waits, its end when settled."""
        text = ""
        name = escape_controls(item.name, keep_newlines=False)
        if item.arguments is not None and (previous is None or previous.arguments is None):
            text += self._line(f"→ {name} {_one_line(summarize_arguments(item.name, item.arguments), 100)}")
        asked_now = item.status == "awaiting_approval" and (previous is None or previous.status != item.status)
        if asked_now or (previous is None and item.decided_by == "user"):  # joined late: the card was shown
            pending = next((a for a in state.approvals if a.call_id == item.call_id), None)
            out.keep = True
            text += self._line(approval_card(pending or item, color=self._markdown).rstrip("\n"))
        if item.decision is not None and (previous is None or previous.decision != item.decision):
            by = f" ({escape_controls(item.decided_by, keep_newlines=False)})" if item.decided_by else ""
            text += self._line(f"  {item.decision}{by}")
        if item.kernel is not None and (previous is None or previous.kernel != item.kernel):
            change = item.kernel
            line = kernel_line(list(change.added), list(change.rebound), list(change.deleted),
                               list(change.mutated), list(change.unchecked))
            dropped = f"; released by the undo memory cap: {', '.join(change.dropped)}" if change.dropped else ""
            text += self._line(f"  {escape_controls(line + dropped, keep_newlines=False)}")
        if _settled_now(previous, item):
            output = (item.output or "").strip()
            detail = f": {_one_line(output.splitlines()[0], 100)}" if item.status != "done" and output else ""
            text += self._line(f"  {STATUS_MARKS.get(item.status, '?')} {name} {item.status}{detail}")
        return text

    def _notice(self, notice: NoticeItem, out: "_Output") -> str:
        if notice.level == "error":
            out.keep = True
            return self._line(f"error: {escape_controls(notice.text)}")
        if notice.level == "memory":
            return self._line(_one_line(notice.text, 120))
        return self._line(f"[{_one_line(notice.text, 200)}]")

    def _todos(self, todos: tuple[dict[str, Any], ...]) -> str:
        lines = [f"todos: {counts_line_for(list(todos))}"]
        lines += [f"  {TODO_MARKS.get(str(t.get('status')), '?')} {_one_line(str(t.get('content', '')), 200)}"
                  for t in todos]
        return self._line("\n".join(lines))

    def _memory_lines(self, old: Turn | None, new: Turn) -> str:
        shown = {_entry_text(x) for x in (old.memory if old is not None else ())}
        texts = [_entry_text(x) for x in new.memory if _entry_text(x) not in shown]
        if not texts:
            return ""
        return self._line(f"memory in this turn's prompt: {_one_line('; '.join(texts), 100)}")

    def _files_changed(self, files: tuple[str, ...]) -> str:
        if not files:  # a turn that changed only the kernel's variables
            return self._line("kernel variables changed (/undo puts them back)")
        return self._line(f"files changed: {_files(files)} (nbagent undo puts them back)")

    def _checkpoint(self, e: ev.Checkpoint) -> str:
        label = "undid" if e.action == "undone" else "redid"
        if e.rows:  # part of the turn, picked in its review
            return self._line(f"{label} {len(e.rows)} change(s) of turn {e.turn}: {_files(e.files)}")
        return self._line(f"{label} turn {e.turn}: {_files(e.files) or 'kernel variables'}")

    def _ended(self, turn: Turn, out: "_Output") -> None:
        self._stop_thinking()
        out.say(self._close_answer())
        lines = []
        if self._thought and not self.quiet:
            lines.append(f"(thought for {self._thought:.1f} s)")
        self._thought = 0.0
        if turn.status != "done":
            lines.append(f"[turn ended: {turn.status}]")
        if lines:
            out.note(self._line("\n".join(lines)))


_MISSING = object()


class _Output:
    """What one change prints, in order, and whether quiet mode keeps its activity (approval cards,
    errors, the turn's end)."""

    def __init__(self, close_answer: Callable[[], str]) -> None:
        self.parts: list[tuple[str, str]] = []
        self.keep = False
        self._close_answer = close_answer

    def say(self, text: str) -> None:
        if text:
            self.parts.append(("answer", text))

    def note(self, text: str) -> None:
        """An activity line; the answer's open paragraph ends first."""
        if text:
            self.say(self._close_answer())
            self.parts.append(("activity", text))

    def rendered(self, quiet: bool) -> Rendered:
        drop = quiet and not self.keep
        return Rendered(tuple(p for p in self.parts if not (drop and p[0] == "activity")))


def _settled_now(previous: ToolItem | None, item: ToolItem) -> bool:
    """The call's result came (``tool_result``), or the turn ended with the call still open."""
    if item.output is not None:
        return previous is None or previous.output is None
    return item.status == "interrupted" and (previous is None or previous.status != "interrupted")


def _turn_of(state: AgentState, turn_id: str) -> Turn | None:
    """The turn ``turn_id`` in flight, or just ended (the transcript's last)."""
    if state.turn is not None and state.turn.turn_id == turn_id:
        return state.turn
    if state.transcript and state.transcript[-1].turn_id == turn_id:
        return state.transcript[-1]
    return None


def _files(files) -> str:
    return _one_line(", ".join(escape_controls(f, keep_newlines=False) for f in files), 200)


def _entry_text(entry: dict[str, Any]) -> str:
    return str(entry.get("text", ""))


def _one_line(text: str, limit: int) -> str:
    return escape_controls(truncate(text, limit, one_line=True), keep_newlines=False)


# ----- the answer's text -------------------------------------------------------------------------
class _PlainAnswer:
    """Streams the text as it comes; a blank line between paragraphs, each ending with a newline."""

    def __init__(self) -> None:
        self._open = False
        self._started = False  # a paragraph was written in this turn
        self._trailing = 0  # newlines at the end of what was written

    def add(self, text: str) -> str:
        if not self._open:
            text = text.lstrip("\n")
            if not text:
                return ""
            self._open = True
            prefix = "\n" * max(0, 2 - self._trailing) if self._started else ""
            self._started = True
        else:
            prefix = ""
        out = prefix + escape_controls(text)
        stripped = out.rstrip("\n")
        self._trailing = len(out) - len(stripped) if stripped else self._trailing + len(out)
        return out

    def close(self) -> str:
        if not self._open:
            return ""
        self._open = False
        if self._trailing:
            return ""
        self._trailing = 1
        return "\n"


_FENCE = re.compile(r"^ {0,3}(```|~~~)")


class _MarkdownAnswer:
    """Buffers the text and renders each finished Markdown block (up to a blank line outside a code fence)."""

    def __init__(self, width: int | None) -> None:
        self._width = width
        self._buffer = ""
        self._blocks = 0

    def add(self, text: str) -> str:
        self._buffer += escape_controls(text)
        cut = _last_block_end(self._buffer)
        if cut <= 0:
            return ""
        done, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return self._render(done)

    def close(self) -> str:
        done, self._buffer = self._buffer, ""
        return self._render(done)

    def _render(self, source: str) -> str:
        if not source.strip():
            return ""
        prefix = "\n" if self._blocks else ""
        self._blocks += 1
        return prefix + render_markdown(source, self._width)


def _last_block_end(text: str) -> int:
    """The offset just after the last blank line that lies outside a fenced code block (0: none)."""
    in_fence = False
    offset = end = 0
    for line in text.splitlines(keepends=True):
        offset += len(line)
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.strip() and line.endswith("\n"):
            end = offset
    return end


def render_markdown(source: str, width: int | None = None) -> str:
    """Markdown as terminal text (styles as ANSI sequences), ``width`` columns wide (default: the terminal's).

    Links are shown as "text (url)" rather than terminal hyperlinks, so a link's target is never hidden.
    """
    import io

    from rich.console import Console
    from rich.markdown import Markdown

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=width or shutil.get_terminal_size().columns,
                      highlight=False, markup=False, emoji=False, soft_wrap=False)
    console.print(Markdown(source, hyperlinks=False))
    lines = [line.rstrip() for line in buffer.getvalue().rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"


# ----- approvals -------------------------------------------------------------------------------
_DIFF_COLORS = {"+": "\x1b[32m", "-": "\x1b[31m", "@": "\x1b[35m"}


def approval_card(request: ev.ApprovalRequest | PendingApproval | ToolItem, *, color: bool = False) -> str:
    """The whole call awaiting approval: its tool, every argument in full, and the diff of an edit.

    Nothing is cut; control characters and escape sequences are shown escaped, so what the card shows
    is what would run. Multi-line values keep their lines, each indented under the argument's name.
    """
    lines = [f"? approval needed for {escape_controls(request.name, keep_newlines=False)}"]
    key = key_argument(request.name)
    arguments = request.arguments or {}
    names = sorted(arguments, key=lambda name: name != key)  # the telling argument first
    for name in names:
        lines += _argument_lines(escape_controls(str(name), keep_newlines=False), arguments[name])
    annotations = getattr(request, "annotations", None)
    if annotations:  # an MCP server's own claims about the tool: shown, never relied on
        hints = ", ".join(f"{k}={v}" for k, v in annotations.items())
        lines.append(f"  server's hints (unverified): {escape_controls(hints, keep_newlines=False)}")
    if request.diff:
        lines.append("  diff:")
        lines += [_diff_line(escape_controls(line, keep_newlines=False), color)
                  for line in request.diff.rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"


def _argument_lines(name: str, value: Any) -> list[str]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = escape_controls(text).replace("\t", "\\t")
    parts = text.split("\n")
    if len(parts) == 1:
        return [f"  {name}: {text}"]
    return [f"  {name}:"] + [f"    {part}" for part in parts]


def _diff_line(line: str, color: bool) -> str:
    start = _DIFF_COLORS.get(line[:1]) if color and not line.startswith(("+++", "---")) else None
    return f"    {start}{line}\x1b[0m" if start else f"    {line}"
