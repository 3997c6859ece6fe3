"""The view registry (ViewHub): one per agent, it keeps the agent's state for its live views.

It starts from ``Agent.watch`` (the snapshot and the subscription taken at the same instant), reduces
every event onto one LiveState and hands the new state to the views of the turns still shown live, so
every view of an agent renders the same state by the same rules. Followers (``agent.view()``) get a
view for the turn running and the prompts queued when they start following, then one per new turn.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

from ... import events as ev

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
        from .live_state import LiveState

        self.agent = agent
        self._views: dict[str, Any] = {}
        """The live TurnView of each turn shown (until its turn ends), by turn id."""
        self._finished: "weakref.WeakSet[Any]" = weakref.WeakSet()
        """Views of ended turns: they still show their checkpoint's Undo/Redo, from wherever it came."""
        self._followers: list[Callable[[object], None]] = []
        self._lock = threading.Lock()
        self.live = LiveState()
        self._early: list[ev.AnyEvent] | None = []
        """Events that came (on the agent's thread) before ``watch`` returned its snapshot here."""
        state, self._unsubscribe = agent.watch(self._on_event)
        with self._lock:
            self.live.state = state
            for event in self._early or ():
                self.live.apply(event)
            self._early = None

    @property
    def state(self):
        return self.live.state

    def turn_view(self, prompt: str, turn_id: str):
        """The live view of the turn ``turn_id`` (made now, before the prompt is submitted or while it runs)."""
        from .turn import TurnView

        agent = self.agent
        view = TurnView(turn_id=turn_id, prompt=prompt, decide=agent.decide, stop=agent.stop_command,
                        abort=agent.abort, act=lambda action, arg: _act(agent, action, arg), live=self.live)
        with self._lock:
            if not view.ended:
                self._views[turn_id] = view
        return view

    def submit(self, view, prompt: str, attach=None):
        """Submit ``prompt`` as ``view``'s turn (every prompt ends with a turn_end, which ends the view);
        ``attach``: see Agent.submit."""
        return self.agent.submit(prompt, turn_id=view.turn_id, keep_deltas=False, attach=attach)

    def follow(self, on_view: Callable[[object], None]) -> Callable[[], None]:
        """Call ``on_view(view)`` with the view of the turn running and of each prompt queued, then with
        the view of every turn from now on (for agent.view())."""
        with self._lock:
            self._followers.append(on_view)
            state = self.live.state
        for turn_id, prompt in _live_turns(state):
            on_view(self._view_of(turn_id, prompt))

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

    def _view_of(self, turn_id: str, prompt: str):
        with self._lock:
            view = self._views.get(turn_id)
        return view if view is not None else self.turn_view(prompt, turn_id)

    # ----- on the agent's thread -------------------------------------------------------------
    def _on_event(self, event: ev.AnyEvent) -> None:
        with self._lock:
            if self._early is not None:
                self._early.append(event)
                return
            state = self.live.apply(event)
            followers = list(self._followers)
            known = event.turn_id in self._views
        if followers and not known and isinstance(event, (ev.PromptQueued, ev.TurnStart)):
            view = self.turn_view(event.prompt, event.turn_id)
            for on_view in followers:
                on_view(view)
        with self._lock:
            views = list(self._views.values())
            finished = list(self._finished) if isinstance(event, ev.Checkpoint) else []
        for view in views + finished:
            view.update(state, event)
        if isinstance(event, ev.TurnEnd):
            with self._lock:
                view = self._views.pop(event.turn_id, None)
                if view is not None:
                    self._finished.add(view)


def _live_turns(state) -> list[tuple[str, str]]:
    """(turn id, prompt) of the turn in flight and of the prompts queued, in order."""
    turns = [(state.turn.turn_id, state.turn.prompt)] if state.turn is not None else []
    return turns + [(q.turn_id, q.prompt) for q in state.queue]


def _act(agent, action: str, arg):
    """A view's button: undo or redo turn ``arg``, or (confirmed) replay the cells ``arg``."""
    if action == "replay":
        return agent.replay(arg)
    return getattr(agent, action)(turn=arg)
