"""AgentView: what ``agent.view()`` shows, a TurnView per turn in order.

It starts with the turn running and the prompts queued when it opens (rendered from the agent's state as
they are), then gains the view of every turn after."""

from __future__ import annotations

import threading

import ipywidgets as widgets

from .view_registry import hub_for


class AgentView(widgets.VBox):
    """Follows an agent; ``clear()`` empties it (the session stays)."""

    def __init__(self, agent):
        super().__init__()
        self._lock = threading.Lock()
        self._unfollow = hub_for(agent).follow(self._add)

    @property
    def turns(self) -> list:
        return list(self.children)

    def _add(self, view) -> None:
        with self._lock:
            if view not in self.children:
                self.children = (*self.children, view)

    def __repr__(self) -> str:
        return f"<nbagent live view: {len(self.children)} turn(s)>"

    def clear(self) -> None:
        with self._lock:
            self.children = ()

    def close(self) -> None:
        self._unfollow()
        super().close()
