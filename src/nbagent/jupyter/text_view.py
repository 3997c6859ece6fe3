"""The plain-text rendering of a turn, for frontends without widgets (terminal IPython, nbconvert).

``TextRenderer.render(event)`` returns the text to print for one event (often ""), so the caller
decides where it goes: straight to the terminal from the agent's thread, or drained by the cell
that waits for the turn so that nbconvert stores it in that cell's output.
"""

from __future__ import annotations

import time

from .. import events as ev
from .widgets.format import TODO_MARKS, counts_line_for, shorten, summarize_arguments

STATUS_MARKS = {"done": "✓", "failed": "✗", "denied": "⊘", "killed": "■"}


class TextRenderer:
    def __init__(self, show_reasoning: bool = False):
        self.show_reasoning = show_reasoning
        self._column = 0
        self._thinking_since: float | None = None
        self._thought = 0.0

    def render(self, event: ev.Event) -> str:
        if isinstance(event, ev.ReasoningDelta):
            return self._reasoning(event)
        out = self._stop_thinking()
        handler = getattr(self, "_" + event.type, None)
        return out + (handler(event) if handler else "")

    def _reasoning(self, e: ev.ReasoningDelta) -> str:
        if self._thinking_since is None:
            self._thinking_since = time.monotonic()
            return self._line("thinking…") if not self.show_reasoning else self._line("thinking:")
        return e.text if self.show_reasoning else ""

    def _stop_thinking(self) -> str:
        if self._thinking_since is not None:
            self._thought += time.monotonic() - self._thinking_since
            self._thinking_since = None
        return ""

    def _line(self, text: str) -> str:
        """A line of its own, after any streamed text."""
        prefix = "\n" if self._column else ""
        self._column = 0
        return f"{prefix}{text}\n"

    def _text_delta(self, e: ev.TextDelta) -> str:
        if e.text:
            self._column = len(e.text) - e.text.rfind("\n") - 1 if "\n" in e.text else self._column + len(e.text)
        return e.text

    def _prompt_queued(self, e: ev.PromptQueued) -> str:
        return self._line(f"[queued at position {e.position}: {shorten(e.prompt, 60)}]")

    def _tool_call(self, e: ev.ToolCall) -> str:
        return self._line(f"→ {e.name} {summarize_arguments(e.name, e.arguments)}")

    def _approval_request(self, e: ev.ApprovalRequest) -> str:
        body = e.diff.rstrip("\n") + "\n" if e.diff else ""
        return self._line(f"? approval needed for {e.name}") + body

    def _approval_decision(self, e: ev.ApprovalDecision) -> str:
        return self._line(f"  {e.decision} ({e.by})")

    def _tool_result(self, e: ev.ToolResult) -> str:
        first = shorten(e.output.strip().splitlines()[0], 100) if e.output.strip() else ""
        detail = f": {first}" if e.status != "done" and first else ""
        return self._line(f"  {STATUS_MARKS.get(e.status, '?')} {e.name} {e.status}{detail}")

    def _todos_changed(self, e: ev.TodosChanged) -> str:
        lines = [f"todos: {counts_line_for(e.todos)}"]
        lines += [f"  {TODO_MARKS.get(t.get('status'), '?')} {t.get('content', '')}" for t in e.todos]
        return self._line("\n".join(lines))

    def _memory_changed(self, e: ev.MemoryChanged) -> str:
        if e.action not in ("remember", "forget"):
            return ""
        texts = "; ".join(str(x.get("text", "")) for x in e.entries)
        return self._line(f"memory {e.action}: {shorten(texts, 100)}")

    def _compacted(self, e: ev.Compacted) -> str:
        return self._line(f"[{e.message or 'compacted'}]")

    def _error(self, e: ev.Error) -> str:
        return self._line(f"error: {e.message}")

    def _turn_end(self, e: ev.TurnEnd) -> str:
        lines = []
        if self._thought:
            lines.append(f"(thought for {self._thought:.1f} s)")
        if e.reason != "done":
            lines.append(f"[turn ended: {e.reason}]")
        out = self._line("\n".join(lines)) if lines else ("\n" if self._column else "")
        self._column = 0
        return out
