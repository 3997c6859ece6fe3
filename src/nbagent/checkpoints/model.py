"""The small value types every checkpoint store shares: an entry (mode, object id) and a change."""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    """One file in a snapshot: git's mode string ("100644", "100755", "120000") and its object id."""

    mode: str
    oid: str


Change = tuple[Entry | None, Entry | None]
"""(entry before, entry after) of one path; None where the path does not exist."""

FILE = "100644"
EXECUTABLE = "100755"
SYMLINK = "120000"
