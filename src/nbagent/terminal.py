"""The terminal front end's two parts, shared by the CLI and the text view: a renderer and an approver.

``TerminalRenderer.render(event)`` returns what to print for one event as two strings: ``answer`` (the
model's text, for stdout) and ``activity`` (tools, approvals, todos, errors, for stderr or the same
stream); ``.text`` joins them in order. Paragraphs of different model steps are kept apart by a blank
line. With ``markdown=True`` (stdout is a terminal) each finished Markdown block of the answer is
rendered for the terminal by ``rich``; otherwise the answer streams as the model wrote it.

``TerminalApprover`` asks for a decision on an approval request whose card (``approval_card``: the
whole call, every argument in full, and the diff) was shown first. Everything that nbagent did not
write itself goes through ``display.escape_controls`` before it reaches the terminal.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, TextIO

from . import events as ev
from .context.notes import note_line
from .display import (STATUS_MARKS, TODO_MARKS, counts_line_for, escape_controls, key_argument, shorten,
                      summarize_arguments)


@dataclass(frozen=True)
class Rendered:
    """What one event prints: the answer's text and the activity lines, in this order."""

    answer: str = ""
    activity: str = ""

    @property
    def text(self) -> str:
        return self.answer + self.activity


class TerminalRenderer:
    """Turns one turn's events into terminal text (make one per turn)."""

    def __init__(self, *, markdown: bool = False, width: int | None = None, show_reasoning: bool = False,
                 quiet: bool = False):
        self.show_reasoning = show_reasoning
        self.quiet = quiet
        """Only the answer, approval cards and errors: no tool activity."""
        self._answer = _MarkdownAnswer(width) if markdown else _PlainAnswer()
        self._markdown = markdown
        self._activity_column = 0
        self._thinking_since: float | None = None
        self._thought = 0.0

    def render(self, event: ev.Event) -> Rendered:
        if isinstance(event, ev.TextDelta):
            return Rendered(self._answer.add(event.text))
        answer = self._answer.close()
        if isinstance(event, ev.ReasoningDelta):
            return Rendered(answer, "" if self.quiet else self._reasoning(event.text))
        self._stop_thinking()
        if self.quiet and event.type not in ("error", "turn_end", "approval_request"):
            return Rendered(answer)
        handler: Callable[[Any], str] | None = getattr(self, "_" + event.type, None)
        return Rendered(answer, handler(event) if handler else "")

    # ----- activity ------------------------------------------------------------------------
    def _line(self, text: str) -> str:
        """A line of its own (after streamed reasoning, if any)."""
        prefix = "\n" if self._activity_column else ""
        self._activity_column = 0
        return f"{prefix}{text}\n"

    def _reasoning(self, text: str) -> str:
        if self._thinking_since is None:
            self._thinking_since = time.monotonic()
            return self._line("thinking:" if self.show_reasoning else "thinking…")
        if not self.show_reasoning or not text:
            return ""
        text = escape_controls(text)
        self._activity_column = len(text) - text.rfind("\n") - 1
        return text

    def _stop_thinking(self) -> None:
        if self._thinking_since is not None:
            self._thought += time.monotonic() - self._thinking_since
            self._thinking_since = None

    def _prompt_queued(self, e: ev.PromptQueued) -> str:
        return self._line(f"[queued at position {e.position}: {_one_line(e.prompt, 60)}]")

    def _tool_call(self, e: ev.ToolCall) -> str:
        return self._line(f"→ {escape_controls(e.name, keep_newlines=False)} "
                          f"{_one_line(summarize_arguments(e.name, e.arguments), 100)}")

    def _approval_request(self, e: ev.ApprovalRequest) -> str:
        return self._line(approval_card(e, color=self._markdown).rstrip("\n"))

    def _approval_decision(self, e: ev.ApprovalDecision) -> str:
        return self._line(f"  {e.decision} ({e.by})")

    def _tool_result(self, e: ev.ToolResult) -> str:
        output = e.output.strip()
        detail = f": {_one_line(output.splitlines()[0], 100)}" if e.status != "done" and output else ""
        name = escape_controls(e.name, keep_newlines=False)
        return self._line(f"  {STATUS_MARKS.get(e.status, '?')} {name} {e.status}{detail}")

    def _todos_changed(self, e: ev.TodosChanged) -> str:
        lines = [f"todos: {counts_line_for(e.todos)}"]
        lines += [f"  {TODO_MARKS.get(str(t.get('status')), '?')} {_one_line(str(t.get('content', '')), 200)}"
                  for t in e.todos]
        return self._line("\n".join(lines))

    def _memory_changed(self, e: ev.MemoryChanged) -> str:
        if e.action not in ("remember", "forget"):
            return ""
        texts = "; ".join(str(x.get("text", "")) for x in e.entries)
        return self._line(f"memory {e.action}: {_one_line(texts, 100)}")

    def _memory_injected(self, e: Any) -> str:
        if not e.entries:
            return ""
        texts = "; ".join(str(x.get("text", "")) for x in e.entries)
        return self._line(f"memory in this turn's prompt: {_one_line(texts, 100)}")

    def _settings_changed(self, e: Any) -> str:
        pairs = ", ".join(f"{k}={v}" for k, v in e.settings.items())
        return self._line(f"[settings: {_one_line(pairs, 200)}]")

    def _compacted(self, e: ev.Compacted) -> str:
        return self._line(f"[{_one_line(e.message, 200) or 'compacted'}]")

    def _context_note(self, e: ev.ContextNote) -> str:
        return self._line(f"[{escape_controls(note_line(e.source, e.change, e.summary, e.changes))}]")

    def _error(self, e: ev.Error) -> str:
        return self._line(f"error: {escape_controls(e.message)}")

    def _checkpoint(self, e: ev.Checkpoint) -> str:
        files = _one_line(", ".join(escape_controls(f, keep_newlines=False) for f in e.files), 200)
        label = {"taken": "files changed", "undone": f"undid turn {e.turn}", "redone": f"redid turn {e.turn}",
                 "diverged": "changed since the last checkpoint"}.get(e.action, e.action)
        hint = " (nbagent undo puts them back)" if e.action == "taken" else ""
        return self._line(f"{label}: {files}{hint}")

    def _turn_end(self, e: ev.TurnEnd) -> str:
        lines = []
        if self._thought and not self.quiet:
            lines.append(f"(thought for {self._thought:.1f} s)")
        if e.reason != "done":
            lines.append(f"[turn ended: {e.reason}]")
        return self._line("\n".join(lines)) if lines else ""


def _one_line(text: str, limit: int) -> str:
    return escape_controls(shorten(text, limit), keep_newlines=False)


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


def approval_card(request: ev.ApprovalRequest, *, color: bool = False) -> str:
    """The whole call awaiting approval: its tool, every argument in full, and the diff of an edit.

    Nothing is cut; control characters and escape sequences are shown escaped, so what the card shows
    is what would run. Multi-line values keep their lines, each indented under the argument's name.
    """
    lines = [f"? approval needed for {escape_controls(request.name, keep_newlines=False)}"]
    key = key_argument(request.name)
    names = sorted(request.arguments, key=lambda name: name != key)  # the telling argument first
    for name in names:
        lines += _argument_lines(escape_controls(str(name), keep_newlines=False), request.arguments[name])
    if request.annotations:  # an MCP server's own claims about the tool: shown, never relied on
        hints = ", ".join(f"{k}={v}" for k, v in request.annotations.items())
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


_ANSWERS = {"y": "approve", "yes": "approve", "n": "deny", "no": "deny", "": "deny",
            "a": "always", "always": "always"}


class TerminalApprover:
    """Asks "approve? [y]es / [n]o / [a]lways" for a request whose card is already on screen.

    ``ask(question) -> answer`` reads one answer (``input`` in a kernel or terminal IPython); with no
    ``ask`` (no terminal to ask on) or when asking fails (no stdin: nbconvert), the call is denied and
    ``unattended`` says how to run such calls unattended.
    """

    def __init__(self, ask: Callable[[str], str] | None, *, out: TextIO | None = None,
                 unattended: str = "use approval mode auto or read-only to run unattended"):
        self.ask = ask
        self.out = out
        self.unattended = unattended

    def __call__(self, request: ev.ApprovalRequest) -> str:
        name = escape_controls(request.name, keep_newlines=False)
        if self.ask is None:
            return self._deny(f"[denied {name}: no terminal to ask; {self.unattended}]")
        question = f"approve {name}? [y]es / [n]o / [a]lways: "
        for _ in range(3):
            try:
                answer = self.ask(question)
            except (EOFError, OSError, RuntimeError):  # RuntimeError: IPython's StdinNotImplementedError
                return self._deny(f"  (no way to ask here: denied; {self.unattended})")
            decision = _ANSWERS.get(answer.strip().lower())
            if decision is not None:
                return decision
            question = "please answer y, n or a: "
        return self._deny("  (no clear answer: denied)")

    def _deny(self, message: str) -> str:
        print(message, file=self.out or sys.stderr, flush=True)
        return "deny"


def ask_on_stderr(question: str) -> str:
    """Ask on the terminal with the question on stderr (stdout carries only the answer's text)."""
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError("no answer")
    return line
