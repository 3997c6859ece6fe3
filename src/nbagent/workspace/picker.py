"""The @ picker's matcher: ranks workspace files for a query, narrowing from the previous query as it grows.

Typing adds one character at a time, and every path matching the longer query matched the shorter
one: so the candidates of "src/co" are searched among those of "src/c", not among all files again.
A candidate keeps where the earliest in-order match of the query's characters ends, so one more
character costs a single ``str.find`` per candidate. A stack of the previous queries' candidates
makes backspace free too.
"""

from __future__ import annotations

import heapq
import re
import threading

Candidates = list[tuple[int, int]]
"""(file index, end of the earliest in-order match of the query in the lower-cased path)."""


class Picker:
    """Ranks ``files`` (sorted paths) for queries; keeps the candidates of the queries typed before."""

    def __init__(self, files: list[str]):
        self.files = files
        self.lower = [f.lower() for f in files]
        self._stack: list[tuple[str, Candidates]] = []
        self._lock = threading.Lock()
        self._nearest: dict[int, list[str]] = {}

    def pick(self, query: str, limit: int = 20) -> list[str]:
        """Files matching ``query``, best first (see ``Workspace.pick`` for the order)."""
        q = query.strip().lstrip("@").lower()
        if not q:  # nothing typed yet: the files nearest the root (the same for every "@")
            if limit not in self._nearest:
                self._nearest[limit] = [self.files[i] for i in self._best(list(range(len(self.files))), limit)]
            return list(self._nearest[limit])
        with self._lock:
            candidates = self._candidates(q)
        lower = self.lower
        whole = [i for i, _ in candidates if q in lower[i]]
        # Tiers, best first; a later tier is only looked at while the earlier ones leave room.
        at_start = [i for i in whole if lower[i].startswith(q)]
        picked = self._best(at_start, limit)
        if len(picked) < limit:
            at_name = [i for i in whole if not lower[i].startswith(q)
                       and lower[i].startswith(q, lower[i].rfind("/") + 1)]
            picked += self._best(at_name, limit - len(picked))
        if len(picked) < limit:
            inside = [i for i in whole if not lower[i].startswith(q)
                      and not lower[i].startswith(q, lower[i].rfind("/") + 1)]
            picked += self._best(inside, limit - len(picked))
        if len(picked) < limit:  # the query's characters spread out: tightest span first
            loose = _in_order(q)
            spread = []
            for i, _ in candidates:
                low = lower[i]
                if q not in low and (m := loose.match(low)):
                    spread.append((m.end(1) - m.start(1), self._key(i), i))
            picked += [i for *_, i in heapq.nsmallest(limit - len(picked), spread)]
        return [self.files[i] for i in picked]

    def _key(self, i: int) -> tuple[int, int, str]:
        path = self.lower[i]
        return (path.count("/"), len(path), self.files[i])

    def _best(self, indices: list[int], n: int) -> list[int]:
        return heapq.nsmallest(n, indices, key=self._key) if n > 0 else []

    def _candidates(self, q: str) -> Candidates:
        """Files holding ``q``'s characters in order, narrowed from the longest earlier query it extends."""
        while self._stack and not q.startswith(self._stack[-1][0]):
            self._stack.pop()
        if self._stack:
            done, candidates = self._stack[-1]
        else:
            done, candidates = "", [(i, 0) for i in range(len(self.lower))]
        lower = self.lower
        for n, ch in enumerate(q[len(done):], start=len(done) + 1):
            candidates = [(i, p + 1) for i, e in candidates if (p := lower[i].find(ch, e)) >= 0]
            self._stack.append((q[:n], candidates))
        return candidates


def _in_order(q: str) -> re.Pattern[str]:
    """Matches a path holding ``q``'s characters in order; group 1 spans them.

    Anchored, and each "[^c]*c" stops at the first c, so it runs in one pass
    without backtracking ("c.*?d" searched from every position would not).
    """
    steps = [f"[^{re.escape(c)}]*{re.escape(c)}" for c in q]
    return re.compile(f"[^{re.escape(q[0])}]*({re.escape(q[0])}{''.join(steps[1:])})")
