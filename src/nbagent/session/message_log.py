"""A session's messages in memory, where what only a transcript needs stays in the store until read.

The store (nbagent.store.messages) hands a resumed session's long tool results and assistants'
tool calls over as *heads*: what pruning keeps of an old message (a tool result without its
content, an assistant's text), with the size of the rest, and a ``fetch`` that reads the whole
messages back. ``all()`` gives every message whole (the transcript, /compact, show, a fork in
memory); the model's request asks for whole messages only from where pruning keeps them
(``view(start, loaded_from)``) and counts the others by size (``sizes``), so the sizes, and with
them the pruned request, are exactly what they would be with every message whole. A head is always
replaced by its whole message before anything sends or shows it: only the request path, which cuts
old messages down to their heads anyway, ever sees one.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Callable

from ..errors import StoreError

Message = dict[str, Any]
Fetch = Callable[[list[int]], dict[int, Message]]
"""Sorted indexes -> their whole messages; raises StoreError naming a missing or corrupt one."""


def message_chars(m: Message) -> int:
    """The size of a message for pruning's token estimate (nbagent.engine.compaction): about four a token."""
    # The store keeps this of what a message's head omits (store/messages.py, omitted_chars): a change
    # here needs a migration that recomputes that column, or resumed requests would be pruned differently.
    n = len(m.get("content") or "") + len(m.get("reasoning") or "")
    for call in m.get("tool_calls") or ():
        n += len(call.get("arguments") or "") + len(call.get("name") or "")
    for item in m.get("reasoning_items") or ():
        n += len(str(item.get("encrypted_content") or "")) // 2
    for image in m.get("images") or ():  # nbagent.images: its estimated tokens, not its base64's length
        n += 4 * int(image.get("tokens") or 0) if isinstance(image, dict) else 0
    return n


class MessageLog:
    def __init__(self, messages: list[Message] | None = None, heads: dict[int, int] | None = None,
                 fetch: Fetch | None = None):
        self._items: list[Message] = messages if messages is not None else []
        self._heads = dict(heads or {})
        """Index of a head -> message_chars of what it omits (still in the store)."""
        if self._heads and fetch is None:
            raise ValueError("a MessageLog with heads needs a fetch to read them whole")
        self._fetch = fetch
        self._lock = threading.RLock()
        self._sizes: list[int] = []
        """message_chars of the first len(_sizes) messages, as if whole."""
        self._totals: list[int] = [0]
        """_totals[i]: the sum of _sizes[:i]."""

    def __len__(self) -> int:
        return len(self._items)

    def extend(self, messages: list[Message]) -> None:
        counted = len(self._sizes) == len(self._items)
        self._items.extend(messages)
        if counted:  # sized as they join (once each), not all at the next request; heads wait for that
            self._count()

    @property
    def unread(self) -> int:
        """How many messages are still heads (their whole selves only in the store)."""
        return len(self._heads)

    def all(self) -> list[Message]:
        """Every message whole (reads the heads' whole messages first)."""
        self.load_from(0)
        return self._items

    def view(self, start: int, loaded_from: int) -> list[Message]:
        """Messages from ``start`` on, whole from ``loaded_from`` on; before it a message may be a head.
        Only for the request path, which cuts those down to their heads anyway (compaction.prune_at)."""
        self.load_from(loaded_from)
        return self._items[start:] if start else self._items

    def heads(self) -> list[Message]:
        """Every message, heads included: for readers of roles and note ids only."""
        return self._items

    def sizes(self, start: int) -> list[int]:
        """message_chars of each message from ``start`` on, as if every message were whole."""
        self._count()
        return self._sizes[start:]

    def chars(self, start: int) -> int:
        """message_chars of the messages from ``start`` on, added up, as if every message were whole:
        from running totals, so a request's size costs the same on a long history as on a short one."""
        self._count()
        return self._totals[-1] - self._totals[min(start, len(self._sizes))]

    def _count(self) -> None:
        # Kept, not recomputed for every request: a message does not change once appended (the loop
        # counts its size then too), and a head's whole message has the size counted for the head.
        if len(self._sizes) < len(self._items):
            with self._lock:  # not while load() swaps a head for its whole message
                known, heads = len(self._sizes), self._heads
                if heads:
                    new = [message_chars(m) + heads.get(i, 0) for i, m in enumerate(self._items[known:], known)]
                else:
                    new = [message_chars(m) for m in self._items[known:]]
                self._sizes.extend(new)
                self._totals.extend(itertools.accumulate(new, initial=self._totals[-1]))
                del self._totals[known]  # accumulate's first value is the total already there

    def readable(self) -> tuple[list[Message], list[str]]:
        """Every message whole that can be read, and why the others cannot (for a transcript to show
        what there is: a damaged row stays a head here, its whole message stays in the store)."""
        problems = []
        with self._lock:
            try:
                self.load_from(0)
            except StoreError:  # one at a time, to read all but the damaged ones
                for i in sorted(self._heads):
                    try:
                        self.load([i])
                    except StoreError as exc:
                        problems.append(str(exc))
            return list(self._items), problems

    def load_from(self, index: int) -> None:
        """Replace the heads at ``index`` and after by their whole messages; all or nothing."""
        if self._heads:
            with self._lock:
                self.load([i for i in self._heads if i >= index])

    def load(self, indexes: list[int]) -> None:
        """Replace the heads among ``indexes`` by their whole messages; all or nothing."""
        with self._lock:  # one reader at a time: the heads change only here, under this lock
            wanted = sorted(i for i in indexes if i in self._heads)
            if not wanted:
                return
            assert self._fetch is not None
            whole = self._fetch(wanted)  # raises before anything changes
            for i in wanted:
                self._items[i] = whole[i]
                del self._heads[i]
