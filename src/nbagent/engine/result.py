"""RunResult: what a finished turn gives back to code, and how it looks in a notebook."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import events as ev
from ..render.escape import escape_html, truncate


@dataclass
class RunResult:
    text: str
    reason: str
    session_id: str
    events: list[ev.AnyEvent] = field(default_factory=list, repr=False)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_events(cls, events: list[ev.AnyEvent], end: ev.TurnEnd, session_id: str) -> "RunResult":
        calls: dict[str, dict[str, Any]] = {}
        usage = {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "image_tokens": 0, "cost": None}
        for e in events:
            if isinstance(e, ev.ToolCall):
                calls[e.call_id] = {"call_id": e.call_id, "name": e.name, "arguments": e.arguments,
                                    "status": "running", "output": "", "is_error": False, "duration_ms": 0.0}
            elif isinstance(e, ev.ToolResult) and e.call_id in calls:
                calls[e.call_id].update(status=e.status, output=e.output, is_error=e.is_error,
                                        duration_ms=e.duration_ms)
            elif isinstance(e, ev.Usage):
                usage["input_tokens"] += e.input_tokens
                usage["output_tokens"] += e.output_tokens
                usage["cached_tokens"] += e.cached_tokens
                usage["image_tokens"] += e.image_tokens
                usage["cost"] = e.cost
        return cls(text=end.text, reason=end.reason, session_id=session_id, events=list(events),
                   tool_calls=list(calls.values()), usage=usage)

    @property
    def ok(self) -> bool:
        return self.reason == "done"

    @property
    def errors(self) -> list[str]:
        return [e.message for e in self.events if isinstance(e, ev.Error)]

    def tool_calls_frame(self):
        """The tool calls as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.tool_calls, columns=["call_id", "name", "arguments", "status", "is_error",
                                                      "duration_ms", "output"])

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        """The answer and its tool calls for a notebook. HTML, not Markdown: everything here came from
        the model (a tool name can hold a backtick, an answer a <script>), so all of it is escaped or
        rendered by nbagent's safe Markdown renderer, never handed to the front end's renderer raw."""
        from ..render.markdown import markdown_to_html

        reason = escape_html(str(self.reason))
        parts = [markdown_to_html(self.text) if self.text else f"<p><em>(no answer: turn ended with {reason})</em></p>"]
        if self.tool_calls:
            rows = "".join(
                f"<tr><td><code>{escape_html(str(c['name']))}</code></td><td>{escape_html(_one_line(c['arguments']))}"
                f"</td><td>{escape_html(str(c['status']))}</td><td>{float(c['duration_ms']):.0f}</td></tr>"
                for c in self.tool_calls
            )
            parts.append("<table><thead><tr><th>tool</th><th>arguments</th><th>status</th><th>ms</th></tr>"
                         f"</thead><tbody>{rows}</tbody></table>")
        if self.reason != "done":
            parts.append(f"<p><em>turn ended: {reason}</em></p>")
        return "\n".join(parts)


def _one_line(arguments: Any, limit: int = 60) -> str:
    items = arguments.items() if isinstance(arguments, dict) else [("arguments", arguments)]
    text = ", ".join(f"{k}={v!r}" for k, v in items).replace("\n", " ")
    return truncate(text, limit)
