"""``agent.context``: the Python handle on an agent's attached sources (push, attach, approve, mute, remove, sources).

Sources attached here belong to the agent's current session (they move with it on fork); pass
``workspace=True`` to share one with every session of the workspace. In a notebook the handle shows
as the sources' table.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from ..tools.kernel import describe
from ..attached.capture import Capture
from ..attached.fetch import check_watchable
from ..attached.records import Source, SourceError, one_line, parse_output
from ..attached.store import ContextStore
from ..workspace.trust import trust

if TYPE_CHECKING:
    from .runtime import AgentRuntime

COLUMNS = ["name", "kind", "scope", "status", "serial", "summary", "changed", "error", "why", "spec"]


class ContextHandle:
    """Built from the agent's runtime (its live context, workspace, kernel and configuration) and a getter
    of its current session id: the session changes on fork, and sources attached here follow it."""

    def __init__(self, runtime: "AgentRuntime", session_id: Callable[[], str]):
        self._runtime = runtime
        self._session_id = session_id

    @property
    def store(self) -> ContextStore:
        return self._runtime.context.store

    @property
    def _session(self) -> str:
        return self._session_id()

    # ----- writing ---------------------------------------------------------------------------
    def push(self, name: str, text: str, *, why: str = "", workspace: bool = False, wake: bool = False) -> str:
        """Set a pushed source's text (attaching it if new); the agent hears of it before its next turn.
        ``wake`` (for a new source): a change may start a turn when ``context_wake`` is on.
        Returns "new" (a new revision) or "same"."""
        if not isinstance(text, str):
            raise SourceError(f"push takes text (str), not {type(text).__name__}")
        return self.store.push(name, parse_output(text), session_id=None if workspace else self._session,
                               why=why or "pushed from Python", wake=wake)

    def attach(self, name: str, command: str | None = None, *, every: float = 30, file: str | None = None,
               variable: str | None = None, why: str = "", wake: bool = False, workspace: bool = False) -> Source:
        """Attach a command source (run by the poller at most every ``every`` seconds, never below the
        configured floor), a watched ``file`` or a kernel ``variable``; the first text is fetched now."""
        given = [k for k, v in (("command", command), ("file", file), ("variable", variable)) if v]
        if len(given) != 1:
            raise SourceError("attach takes exactly one of command=, file= or variable=")
        kind = given[0]
        spec = command or file or variable or ""
        if kind == "variable" and self._runtime.kernel is None:
            raise SourceError("a variable source needs the agent to run inside a kernel (%agent)")
        if kind == "file":
            check_watchable(spec, self._runtime.workspace)
        scope = "" if workspace else self._session
        source = self.store.attach(name, kind, scope=scope, spec=spec, why=why or f"attached by hand ({kind})",
                                   every=every, wake=wake)
        if kind == "command":  # attaching it here is the user's approval of this command for this workspace
            trust(self._runtime.workspace.root, spec, what=f"context source {name}")
        self._first_text(source)
        return self.store.find(name, scope or None)

    def _first_text(self, source: Source) -> None:
        if source.kind == "variable":
            self._refresh_variable(source)
            return
        self._runtime.context.fetch_now(source)

    def approve(self, name: str) -> Source:
        """Approve a stored command source that ``sources()`` shows as "needs approval" (one that came
        with the workspace's database, or was attached elsewhere): its exact command is recorded as
        trusted for this workspace in your config folder, and it runs now and at each poll after."""
        return self._runtime.context.approve(name)

    def mute(self, name: str) -> Source:
        """Stop notes (and polling) for a source; its snapshot stays. ``unmute`` brings it back."""
        return self.store.set_muted(name, self._session, True)

    def unmute(self, name: str) -> Source:
        return self.store.set_muted(name, self._session, False)

    def remove(self, name: str) -> Source:
        """Detach a source; the model gets one "removed" note. A session's source is marked declined."""
        return self.store.remove(name, self._session)

    def capture(self, name: str, *, every: float = 2.0, why: str = "") -> Capture:
        """``with agent.context.capture("training"):`` pushes what the block prints (its tail) as a source."""
        scope = self._session

        def push(text: str) -> None:
            self.store.push(name, parse_output(text), session_id=scope, kind="cell",
                            why=why or "the output of a long-running cell")

        return Capture(push, every=every)

    def refresh_kernel(self) -> int:
        """Refresh the variable sources from the live namespace (the kernel calls this after each cell)."""
        count = 0
        for source in self.store.sources(self._session):
            if source.kind == "variable" and not source.muted:
                self._refresh_variable(source)
                count += 1
        return count

    def _refresh_variable(self, source: Source) -> None:
        bridge = self._runtime.kernel
        if bridge is None:
            self.store.record_error(source.scope, source.name, "no kernel: a variable source needs %agent")
            return
        try:
            if bridge is None:
                raise RuntimeError("no kernel to read the variable from")
            text = describe(source.spec, bridge.lookup(source.spec))
        except Exception as exc:  # a name deleted or an attribute gone: the source fails, text kept
            self.store.record_error(source.scope, source.name, one_line(str(exc), 300))
            return
        self.store.record(source.scope, source.name, parse_output(text))

    # ----- reading ---------------------------------------------------------------------------
    def sources(self):
        """The sources this session sees, as a pandas DataFrame (one row each)."""
        import pandas as pd

        return pd.DataFrame([_row(s) for s in self.store.sources(self._session)], columns=COLUMNS)

    def __repr__(self) -> str:
        found = self.store.sources(self._session)
        if not found:
            return "no attached context sources"
        return "\n".join(f"{s.name} [{s.kind}, {s.status}] {s.snapshot.summary if s.snapshot else ''}"
                         for s in found)

    def _repr_html_(self) -> str:
        frame = self.sources()
        if frame.empty:
            return "<p>no attached context sources</p>"
        return frame.to_html(index=False, escape=True)


def _row(source: Source) -> dict[str, Any]:
    snap = source.snapshot
    return {
        "name": source.name, "kind": source.kind, "scope": "session" if source.scope else "workspace",
        "status": source.status, "serial": snap.serial if snap else 0, "summary": snap.summary if snap else "",
        "changed": _when(snap.fetched_at if snap else None), "error": (snap.error or "") if snap else "",
        "why": source.why, "spec": source.spec,
    }


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) if stamp else ""
