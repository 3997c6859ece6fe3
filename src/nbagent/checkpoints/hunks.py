"""Taking back (or re-applying) some hunks of a text whose other hunks may already be taken back.

A turn changed ``old`` into ``new`` in hunks (nbagent.checkpoints.changes.hunks). The text as the review
left it holds the old side of the hunks undone so far and the new side of the others. To flip more
hunks, the current text is compared with that expectation: when they are equal the result is exact;
when someone changed the text since, a hunk whose lines (or the place where it inserts) were touched
is refused and the others are applied around the user's changes, which stay.
"""

from __future__ import annotations

import difflib

from .changes import hunks

Edit = tuple[int, int, list[str]]


def compose(old: list[str], new: list[str], undone: set[int]) -> tuple[list[str], dict[int, tuple[int, int]]]:
    """The lines with the hunks in ``undone`` on their old side, and each hunk's line range in them."""
    out: list[str] = []
    regions: dict[int, tuple[int, int]] = {}
    at = 0
    for k, h in enumerate(hunks("".join(old), "".join(new))):
        out += old[at:h.i1]
        start = len(out)
        out += old[h.i1:h.i2] if k in undone else new[h.j1:h.j2]
        regions[k] = (start, len(out))
        at = h.i2
    out += old[at:]
    return out, regions


def revise(old: str, new: str, undone: set[int], flip: set[int], current: str, undo: bool) -> tuple[str, set[int]]:
    """``current`` with the hunks in ``flip`` taken back (``undo``) or re-applied; and the hunks refused
    because someone changed their lines since."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    base, regions = compose(a, b, undone)
    target = undone | flip if undo else undone - flip
    if "".join(base) == current:
        return "".join(compose(a, b, target)[0]), set()
    now = current.splitlines(keepends=True)
    user: list[Edit] = [(i1, i2, now[j1:j2]) for tag, i1, i2, j1, j2
                        in difflib.SequenceMatcher(None, base, now, autojunk=False).get_opcodes() if tag != "equal"]
    turn_hunks = hunks(old, new)
    edits, refused = list(user), set()
    for k in sorted(flip):
        start, end = regions[k]
        if any(_touches(start, end, u1, u2) for u1, u2, _ in user):
            refused.add(k)
            continue
        h = turn_hunks[k]
        edits.append((start, end, a[h.i1:h.i2] if undo else b[h.j1:h.j2]))
    return "".join(splice(base, edits)), refused


def _touches(start: int, end: int, u1: int, u2: int) -> bool:
    """Whether the user's change of lines [u1, u2) meets the hunk's lines [start, end); an insertion
    (an empty range) meets what is right beside it, so its place is never ambiguous."""
    if start < end and u1 < u2:
        return u1 < end and u2 > start
    return u1 <= end and u2 >= start


def splice(base: list[str], edits: list[Edit]) -> list[str]:
    """``base`` with each (start, end, lines) replacing its range; the ranges do not overlap."""
    out: list[str] = []
    at = 0
    for start, end, lines in sorted(edits, key=lambda e: (e[0], e[1])):
        out += base[at:start]
        out += lines
        at = end
    return out + base[at:]
