"""Checkpoints: a snapshot before and after each turn that changes the workspace, for undo and redo.

In a git repository a snapshot is a git tree written through nbagent's own
index and pinned by refs under ``refs/nbagent/<session>/``; elsewhere it is
a content-addressed copy under ``.nbagent/checkpoints/``. See docs/checkpoints.md.
"""

from .engine import DEFAULT_MAX_BYTES, CheckpointConflict, Checkpoints, Restored
from .gitrepo import CheckpointError
from .kernel_ledger import KernelConflict
from .manifest import KEEP, TurnCheckpoint

__all__ = ["CheckpointConflict", "CheckpointError", "KernelConflict", "Restored"]
"""The public names (docs/python-api.md, "Public modules"): what undo and redo raise and return. The rest
imported above is for nbagent's own modules (the runtime, the CLI)."""
