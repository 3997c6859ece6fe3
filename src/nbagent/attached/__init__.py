"""Attached context: live sources (commands, pushes, files, kernel state) the agent keeps up with between turns.

A source is attached to a session or to the whole workspace; its snapshot (last good text, revision,
serial, summary, error) lives in the workspace database. The poller refreshes command and file sources
in the background; before each turn the absorber turns what changed into short notes at the tail of
the history, and the model reads a source's text with the read-only ``context_read`` tool.
See docs/context.md.
"""

from .records import Snapshot, Source, SourceError
from .store import ContextStore

__all__ = ["ContextStore", "Snapshot", "Source", "SourceError"]
