"""A request's messages in an API's wire form, converted once: the last request's form is kept for the next.

The loop sends the same message objects again at every step, with the new ones after them
(nbagent.engine.loop: the history is append-only, a pruning cut is kept). So a request whose messages
start with the last request's is that request's wire form with the new messages' added: a step costs
the same on a long history as on a short one (tests/engine/test_flat_steps.py), where converting every
message at every step cost a Python loop over the whole history. Any other history (a new cut, a
compaction, a message copied to drop its images) is converted anew, reusing each message it still
holds as the same object.
"""

from __future__ import annotations

from typing import Any, Callable

Message = dict[str, Any]


class WirePrefix:
    def __init__(self) -> None:
        self._key: Any = None
        self._neutral: list[Message] = []
        self._parts: list[list[dict[str, Any]]] = []
        """Each message's wire items (one for Chat Completions; none or several for Responses)."""
        self._wire: list[dict[str, Any]] = []
        self.marked = False
        """Whether any of the last request's messages was marked (``convert``'s ``mark``)."""

    def convert(self, messages: list[Message], one: Callable[[Message], list[dict[str, Any]]], key: Any = None,
                mark: Callable[[Message], Any] | None = None) -> list[dict[str, Any]]:
        """``messages`` in wire form: each message's ``one(m)`` in order (a new list; the items are shared).
        ``key``: what else the wire form depends on (the origin provider fields go back to): another key
        converts anew. ``mark``: a test for ``marked``, run once per message."""
        kept = len(self._neutral)
        if key != self._key or not (kept and len(messages) >= kept and messages[:kept] == self._neutral):
            # Not an extension of the last request (equal messages compare in C, the same ones at once)
            return self._anew(messages, one, key, mark)
        new = messages[kept:]
        parts = [one(m) for m in new]
        self._neutral += new
        self._parts += parts
        self._wire = self._wire + [item for part in parts for item in part]
        self.marked = self.marked or (mark is not None and any(mark(m) for m in new))
        return self._wire

    def _anew(self, messages: list[Message], one, key: Any, mark) -> list[dict[str, Any]]:
        known = {id(m): (m, part) for m, part in zip(self._neutral, self._parts)} if key == self._key else {}
        parts = []
        for m in messages:
            hit = known.get(id(m))
            parts.append(hit[1] if hit is not None and hit[0] is m else one(m))
        self._key, self._neutral, self._parts = key, list(messages), parts
        self._wire = [item for part in parts for item in part]
        self.marked = mark is not None and any(mark(m) for m in messages)
        return self._wire
