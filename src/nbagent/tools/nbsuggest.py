"""Review before writing (AgentConfig.review_before_writing): a notebook edit recorded, not written.

The edit tools plan their change as usual (the cell's token checked, the diff made); with the setting on,
the planned operation is stored as a "suggested" row of the turn's review (nbagent.store.reviews) instead
of being sent to the notebook. Keeping the row applies it (its token refuses it if the cell changed
since); undoing it discards it. The model is told that the edit waits for the user.
"""

from __future__ import annotations

from typing import Any

from .. import events as ev
from .nbreport import Change

KINDS = {"edited": "source", "inserted": "added", "deleted": "deleted", "moved": "moved"}


def wanted(ctx: Any, exists: bool) -> bool:
    """Whether this edit is to be suggested: the setting is on, a database holds the review, and the
    notebook exists (a notebook the turn creates is written: there is nothing yet to review it in)."""
    state = getattr(ctx, "state", None)
    return bool(ctx.config.review_before_writing and exists and state is not None and state.database is not None)


def suggest(ctx: Any, name: str, change: Change, op: dict) -> str:
    """Record the edit as a suggested row of this turn; the tool's result for the model."""
    from ..store.reviews import ReviewLog

    session = ctx.state.session
    log = ReviewLog(ctx.state.database)
    row_id = log.suggest(session.id, session.turns, name, {
        "path": name, "cell_id": change.cell_id, "kind": KINDS.get(change.verb, "source"), "hunk": None,
        "before": change.before, "after": change.after, "start_before": change.old_pos or 1,
        "start_after": change.new_pos or 1, "ops": [op]})
    waiting = sum(1 for d in log.decisions(session.id, session.turns).values()
                  if d.status == "suggested" and d.path == name)
    ctx.emit(ev.ChangesReviewed(session=session.id, turn=session.turns, path=name, pending=waiting,
                                turn_id=ctx.turn_id))
    return (f"Suggested, not written (review before writing is on): cell {change.cell_id} of {name} would be "
            f"{change.verb}. The suggestion ({row_id}) awaits the user's review in the notebook: it is applied "
            "only if they keep it. The notebook still holds the cell as it was; do not build on this change or "
            "edit the cell again until the user has reviewed it.")
