"""The reply vocabulary shared by the scripted test doubles.

Both the in-process ScriptedModel and the HTTP ScriptedServer take a queue of these: a `Reply` is
what the model says (reasoning, text, tool calls); `Fail`, `BreakStream`, `Stall` and `Slow` script
the ways a real endpoint misbehaves. Plain dataclasses, no dependencies, so either double can use
them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Call:
    """One tool call. `arguments` is a dict, or a raw string sent as is (to script invalid JSON)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    """The call id; None lets the double make one up ("call_...")."""

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One model response: reasoning first, then text, then tool calls (run in parallel if several)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[Call] = field(default_factory=list)
    finish_reason: str | None = None
    """None means "tool_calls" when there are calls, else "stop"; set "length" to script truncation."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    """Usage to report; None lets the double estimate it (about four characters a token)."""
    cached_tokens: int | None = None
    """Cached prompt tokens to report; None lets the server's prompt cache decide (ScriptedServer)."""


@dataclass
class Fail:
    """An HTTP error answer, shaped like OpenAI's: {"error": {"message", "type", "param", "code"}}.

    With `message=None` the status picks an OpenAI-like default message and code; a 400 then means a
    context overflow ("This model's maximum context length is 8192 tokens...", code
    "context_length_exceeded"). With a message of your own, `code` stays as you give it.
    `retry_after` (seconds) is sent as the retry-after and retry-after-ms headers.
    """

    status: int
    message: str | None = None
    retry_after: float | None = None
    code: str | None = None


@dataclass
class BreakStream:
    """Stream the first `after_chunks` chunks (SSE events) of `reply`, then drop the connection."""

    after_chunks: int = 2
    reply: Reply = field(
        default_factory=lambda: Reply(text="This answer is cut off before it ends, mid-way.")
    )


@dataclass
class Stall:
    """Say nothing for `seconds` (to trip a client's request timeout).

    With `after_chunks=None` the stall comes before the response starts; with a number, that many
    chunks of `reply` are streamed first. If the client is still there afterwards it gets `reply`
    (or the rest of it).
    """

    seconds: float
    reply: Reply = field(default_factory=lambda: Reply(text="(after the stall)"))
    after_chunks: int | None = None


@dataclass
class Slow:
    """Stream `reply` with a pause of `delay_per_chunk` seconds before every chunk."""

    delay_per_chunk: float
    reply: Reply = field(default_factory=lambda: Reply(text="A slow answer, streamed bit by bit."))


@dataclass
class Recorded:
    """A response body recorded from a real provider, served byte for byte (HTTP server only).

    ``body`` is the raw SSE stream (``stream=True``) or JSON object. ``cuts`` are byte offsets
    where the body is split into separate writes, as a network splits it: anywhere, inside an SSE
    line or a multi-byte UTF-8 character too. ``Recorded.from_file(path)`` reads a recording.
    """

    body: bytes
    cuts: tuple[int, ...] = ()
    stream: bool = True

    @classmethod
    def from_file(cls, path: Any, cuts: tuple[int, ...] = ()) -> "Recorded":
        from pathlib import Path

        path = Path(path)
        return cls(path.read_bytes(), tuple(cuts), stream=path.suffix != ".json")

    def pieces(self) -> list[bytes]:
        """The body split at ``cuts`` (each offset within the body, in order)."""
        bounds = [0, *sorted(c for c in self.cuts if 0 < c < len(self.body)), len(self.body)]
        return [self.body[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


Scripted = Reply | Fail | BreakStream | Stall | Slow | Recorded
"""Anything a scripted double can be told to do next."""


def text(content: str, reasoning: str = "") -> Reply:
    """A plain answer: `text("Done.")`."""
    return Reply(text=content, reasoning=reasoning)


def call(name: str, /, **arguments: Any) -> Call:
    """A tool call with keyword arguments: `call("read_file", path="a.py")`."""
    return Call(name, dict(arguments))


def calls(*tool_calls: Call, text: str = "", reasoning: str = "") -> Reply:
    """A reply made of tool calls (several run as parallel calls): `calls(call("ls"), call("pwd"))`."""
    return Reply(text=text, reasoning=reasoning, tool_calls=list(tool_calls))


def context_overflow(limit: int = 8192, used: int = 9000) -> Fail:
    """The 400 an OpenAI-compatible server sends when the prompt is longer than the context."""
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages resulted "
        f"in {used} tokens. Please reduce the length of the messages."
    )
    return Fail(400, message, code="context_length_exceeded")


def as_scripted(item: Scripted | str) -> Scripted:
    """A bare string in a script means a text reply."""
    if isinstance(item, str):
        return Reply(text=item)
    if not isinstance(item, (Reply, Fail, BreakStream, Stall, Slow, Recorded)):
        raise TypeError(
            f"cannot script {item!r}: use Reply, Fail, BreakStream, Stall, Slow, Recorded or a str"
        )
    return item
