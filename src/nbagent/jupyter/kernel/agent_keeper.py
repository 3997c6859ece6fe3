"""The kernel's agent (AgentKeeper): the one Agent of this kernel and notebook, built on first use and kept.

Options stick (--model, --toolsets, --approval, --no-memory) and go to the live agent through
``Agent.reconfigure``, on the same session; only --workspace makes a new agent (on the same session
when sessions are stored). -n/-c/-r switch sessions. An agent given with ``use_agent()`` is
reconfigured like any other.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ...config import DEFAULT
from .config import NbAgent
from .notebook_path import Place, find_place, find_workspace



class KeeperError(Exception):
    """Something the user asked for cannot be done now; the message says why and what to do."""


class AgentKeeper:
    def __init__(self, shell=None):
        self.shell = shell
        self.settings: dict[str, Any] = {}
        """Sticky options from the magics, over the traitlets configuration."""
        self.agent: Any = None
        """The Agent in use (None until the first %agent)."""
        self.given = False
        self.place: Place | None = None
        self.last_result = None
        self.notes: list = []
        """Context notes (ev.ContextNote) this kernel's agent received, for /notes."""
        self.replay_plan: list = []
        """The restart-and-replay plan the last /undo offered (nbagent.checkpoints.replay), for /replay."""
        self._lock = threading.Lock()
        self._unsubscribe = None

    # ----- the agent -------------------------------------------------------------------------
    def get(self, session: str = "new") -> Any:
        """The agent, built now if there is none (on ``session``: new, continue or an id)."""
        with self._lock:
            return self.agent if self.agent is not None else self._build(session)

    def use(self, agent) -> None:
        """Make the magics drive ``agent`` (built in code: a custom model, tools, approver...)."""
        with self._lock:
            self._drop()
            self._attach(agent, given=True)

    def configure(self, **changes: Any) -> list[str]:
        """Apply option changes; returns what changed, for the user."""
        changes = {k: v for k, v in changes.items() if v is not None}
        said: list[str] = []
        workspace = changes.pop("workspace", None)
        if workspace is not None and self.settings.get("workspace") != workspace and self.agent is not None:
            said += self._rebuild({"workspace": workspace})
        if workspace is not None:
            self.settings["workspace"] = workspace
        if changes and self.agent is not None:
            changed = self.agent.reconfigure(**changes)
            said += [f"{k}: {_shown(v)}" for k, v in changed.items()]
        for name, value in changes.items():  # DEFAULT: the next agent built takes the configured one too
            if value is DEFAULT:
                self.settings.pop(name, None)
            else:
                self.settings[name] = value
        return said

    def _rebuild(self, changes: dict[str, Any]) -> list[str]:
        """A new agent with ``changes`` (a new workspace), on the same session when sessions are stored."""
        if self.given:
            raise KeeperError("this agent was given with use_agent(): build a new Agent with "
                              f"{', '.join(changes)} changed and pass it to use_agent()")
        self.ensure_idle()
        old, before = self.get(), dict(self.settings)
        stored = old.config.persist
        self.settings.update(changes)
        with self._lock:
            try:
                self._build(old.session_id if stored else "new")
            except Exception:
                self.settings = before  # the old agent stays in use
                raise
        said = "agent rebuilt with " + ", ".join(f"{k}={v}" for k, v in changes.items())
        return [said if stored else said + " (sessions are not stored: a new session starts)"]

    def switch(self, selector: str) -> str:
        """new, continue or a session id; returns the session id now in use."""
        if self.agent is None:
            return self.get(selector).session_id
        self.ensure_idle()
        if selector == "new":
            return self.agent.new_session()
        return self.agent.resume(selector)

    def close(self) -> None:
        with self._lock:
            self._drop()

    # ----- internals -------------------------------------------------------------------------
    def config_settings(self) -> dict[str, Any]:
        return {**self.traits().agent_settings(), **self.settings}

    def traits(self) -> NbAgent:
        return NbAgent(parent=self.shell) if self.shell is not None else NbAgent()

    def view_mode(self) -> str | None:
        return self.traits().view

    def background(self) -> bool:
        chosen = self.traits().background
        return chosen if chosen is not None else getattr(self.shell, "kernel", None) is not None

    def _build(self, session: str) -> Any:
        from ...engine.warmup import settle

        settle()  # the engine's imports, if %load_ext's warm-up is still doing them
        from ...engine.agent import Agent
        from .server_client import connect

        connect()  # notebooks go through the Jupyter server that started this kernel, if any
        settings = self.config_settings()
        self.place = find_place(self.shell)
        # NBAGENT_WORKSPACE names the workspace in a kernel too (as for every other front end).
        settings["workspace"] = find_workspace(self.place, settings.get("workspace") or os.environ.get("NBAGENT_WORKSPACE"))
        settings.setdefault("origin", self.place.origin)
        agent = Agent(session=session, kernel=self._kernel_bridge(), **settings)
        self._drop()  # the old agent, if any, goes only once the new one stands
        self._attach(agent, given=False)
        return agent

    def _attach(self, agent, given: bool) -> None:
        self.agent, self.given = agent, given
        self._unsubscribe = agent.subscribe(self._remember_notes)

    def _remember_notes(self, event) -> None:
        if event.type == "context_note":
            self.notes.append(event)

    def _drop(self) -> None:
        if self.agent is None:
            return
        if self._unsubscribe:
            self._unsubscribe()
        if not self.given:
            self.agent.close()
        self.agent, self.given = None, False

    def _kernel_bridge(self):
        if self.shell is None:
            return None
        try:
            from .bridge import bridge_from_shell
        except ImportError:  # the kernel tools are not installed with this build
            return None
        return bridge_from_shell(self.shell)

    def ensure_idle(self) -> None:
        if self.agent is not None and self.agent.busy:
            raise KeeperError("a turn is running: wait for it (or press Abort) before changing the agent")


def _shown(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
