"""The view registry (ViewHub): one per agent, it routes the agent's events to the live views of their turns.

It subscribes to the agent once and routes each event to the views shown for that event's turn,
keeps their headers and queue counts current, and feeds followers (``agent.view()``) with a view
per turn."""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Callable

from .. import events as ev

log = logging.getLogger("nbagent.jupyter")
_hubs: "weakref.WeakKeyDictionary[object, ViewHub]" = weakref.WeakKeyDictionary()
_hubs_lock = threading.Lock()


def hub_for(agent) -> "ViewHub":
    with _hubs_lock:
        hub = _hubs.get(agent)
        if hub is None:
            hub = _hubs[agent] = ViewHub(agent)
        return hub


class ViewHub:
    def __init__(self, agent):
        self.agent = agent
        self._views: dict[str, Any] = {}
        """The TurnView of each turn shown, by turn id."""
        self._followers: list[Callable[[object], None]] = []
        self._lock = threading.Lock()
        self._unsubscribe = agent.subscribe(self._on_event)

    def turn_view(self, prompt: str, turn_id: str):
        """The live view of the turn ``turn_id`` (made now, before the prompt is submitted)."""
        from .widgets.turn import TurnView

        agent = self.agent
        view = TurnView(turn_id=turn_id, prompt=prompt, decide=agent.decide, stop=agent.stop_command,
                        abort=agent.abort, act=lambda action, turn: getattr(agent, action)(turn=turn),
                        session_id=agent.session_id, title=agent.session.title or "",
                        model=_model_name(agent))
        with self._lock:
            self._views[turn_id] = view
        return view

    def submit(self, view, prompt: str):
        """Submit ``prompt`` as ``view``'s turn (every prompt ends with a turn_end, which ends the view)."""
        return self.agent.submit(prompt, turn_id=view.turn_id, keep_deltas=False)  # the view has the deltas

    def follow(self, on_view: Callable[[object], None]) -> Callable[[], None]:
        """Call ``on_view(view)`` with the view of every turn from now on (for agent.view())."""
        with self._lock:
            self._followers.append(on_view)
            current = list(self._views.values())
        for view in current:
            on_view(view)

        def unfollow() -> None:
            with self._lock:
                if on_view in self._followers:
                    self._followers.remove(on_view)

        return unfollow

    def views(self) -> list:
        with self._lock:
            return list(self._views.values())

    def close(self) -> None:
        self._unsubscribe()

    # ----- on the agent's thread -------------------------------------------------------------
    def _on_event(self, event: ev.Event) -> None:
        view = self._view_for(event)
        if view is not None:
            if isinstance(event, ev.TurnStart):
                self._before_turn(view)
            view.handle(event)
            if isinstance(event, (ev.Usage, ev.TurnEnd)):
                view.set_header(title=self.agent.session.title or "")
        if isinstance(event, (ev.PromptQueued, ev.TurnStart, ev.TurnEnd)):
            self._queue_changed()
        if isinstance(event, ev.TurnEnd):
            with self._lock:
                self._views.pop(event.turn_id, None)

    def _view_for(self, event: ev.Event):
        with self._lock:
            view = self._views.get(event.turn_id)
            followers = list(self._followers)
        if view is None and followers and isinstance(event, (ev.PromptQueued, ev.TurnStart)):
            prompt = event.prompt
            view = self.turn_view(prompt, event.turn_id)
            for on_view in followers:
                on_view(view)
        return view

    def _before_turn(self, view) -> None:
        agent = self.agent
        view.set_header(session_id=agent.session_id, model=_model_name(agent))

    def _queue_changed(self) -> None:
        count = self.agent.queued
        for view in self.views():
            if not view.ended:
                view.set_queued(count)


def _model_name(agent) -> str:
    return agent.session.model or agent.config.model or ""
