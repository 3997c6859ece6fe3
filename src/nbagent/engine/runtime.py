"""AgentRuntime: the parts of an agent wired together (runs on the agent's worker thread).

Agent is the thread-safe facade; this is where the configuration becomes a model, a workspace, a
session, a tool registry and a loop, and where a live change of settings is applied to all of them.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable

from .. import events as ev
from ..tools.approvals import Approvals, default_mode
from .compaction import summarize_session
from ..config import DEFAULT, AgentConfig
from ..errors import ConfigError
from ..render.redaction import logger, register_secret
from ..attached.live import LiveContext
from .loop import Loop
from .stored_commands import StoredCommands
from ..mcp.manager import MCPManager
from ..model.factory import default_model_name, make_model
from ..workspace import sandbox
from ..workspace.procs import ProcessTracker
from .profiles import PROFILES, Profile, apply as apply_profile, choose as choose_profile
from .prompt import short_prompt, static_prompt
from .request_context import RequestContext
from ..session.model import Session
from .session_state import SessionState, open_state
from ..tools import build_registry
from ..tools.context import ToolContext
from ..tools.limits import limit_output
from ..tools.runner import ToolRunner
from ..checkpoints.turn_guard import TurnGuard, diverged_note, undo_note
from ..checkpoints import Restored
from ..checkpoints.remote_ledger import RemoteLedger
from ..workspace.tempfiles import sweep_in_background
from ..workspace.root import Workspace
from ..workspace.state_dir import OUTPUTS, location

log = logger("nbagent")

FIXED_SETTINGS = ("workspace", "persist", "session", "origin", "base_url", "api_key", "api", "local", "profile")
"""Settings a live agent cannot change: they make a different agent (build a new one)."""


class AgentRuntime:
    def __init__(self, config: AgentConfig, *, emit: Callable[[ev.AnyEvent], None], model=None,
                 extra_tools=(), approver=None, kernel=None, listened: Callable[[], bool] | None = None):
        self.emit = self._tracking(emit)
        self.kernel = kernel
        self.extra_tools = list(extra_tools)
        self.tool_extras: dict[str, Any] = {}
        """What a front end gives every tool call (``ToolContext.extras``): see ``set_tool_extra``."""
        self.workspace = Workspace(config.workspace)
        self.processes = ProcessTracker()
        self.model = model if model is not None else make_model(config)
        if config.api_key and len(config.api_key) >= 16:
            register_secret(config.api_key)  # this process's own key never shows in a result, trace or log
        self.profile: Profile = choose_profile(config, offline=getattr(self.model, "offline", False))
        self.config = config = apply_profile(self.profile, config)
        self.registry = build_registry(config, extra_tools=self.extra_tools, kernel=kernel)
        self.mcp = MCPManager(config, self.workspace, self.processes)
        self.mcp.install(self.registry)
        self.approvals = Approvals(lambda: self.config, emit, approver, listened)
        self.state: SessionState = open_state(config, self.model, config.session)
        if config.sweep_temp_files:
            # temporary files a killed write left behind, in the workspace and the state directory
            sweep_in_background(self.workspace.root, location(self.workspace.root))
        self.context = LiveContext(self.state, config, self.emit)
        self.stored_commands = StoredCommands(self)
        self._static_prompt = self._render_static()
        from ..knowledge.turn import TurnKnowledge

        self.knowledge = TurnKnowledge(config, state=lambda: self.state, emit=self.emit,
                                       workspace_root=self.workspace.root)
        self.request_context = RequestContext(static=lambda: self._static_prompt, knowledge=self.knowledge,
                                              state=lambda: self.state, profile=self.profile, emit=self.emit)
        self._build_loop()
        if (config.session or "new") != "new":
            self._recover()

    @property
    def session(self) -> Session:
        return self.state.session

    def set_tool_extra(self, name: str, value: Any) -> None:
        """Give every tool call from now on ``ctx.extras[name] = value`` (this session's and later ones'):
        how a front end hands the tools something of its own, such as its editor's unsaved text."""
        self.tool_extras[name] = value
        if getattr(self, "runner", None) is not None:
            self.runner.base_context.extras[name] = value

    def _build_loop(self) -> None:
        self._release_remote_kernels()  # another session now: the old one's records go unless it can be resumed
        context = ToolContext(workspace=self.workspace, config=self.config, emit=self.emit,
                              processes=self.processes, state=self.state, kernel=self.kernel,
                              extras=dict(self.tool_extras))
        context.extras["approvals"] = self.approvals  # a sandboxed command's proxy asks about a host through it
        remote = None
        if self.kernel is None:  # notebook_run reaches kernels by messages: they keep the undo record
            remote = RemoteLedger(self.session.id, lambda: _notebook_stores(context),
                                  max_bytes=self.config.kernel_undo_max_bytes,
                                  budget_seconds=self.config.kernel_fingerprint_ms / 1000,
                                  resumed=self.session.turns > 0)
            context.extras["kernel_ledger"] = remote
        self.guard = TurnGuard(self.workspace, self.session.id, self.emit, enabled=self.config.checkpoints,
                               journal=self.config.persist and self.config.recovery_journal,
                               max_bytes=self.config.checkpoint_max_bytes, kernel=self.kernel,
                               kernel_max_bytes=self.config.kernel_undo_max_bytes,
                               kernel_budget_seconds=self.config.kernel_fingerprint_ms / 1000,
                               remote_kernels=remote)
        self.guard.checkpoints.notebook_stores = lambda: _notebook_stores(context)
        if self.state.database is not None:  # the review of turns' rows is kept beside the sessions
            from ..store.reviews import ReviewLog

            self.guard.attach_review(ReviewLog(self.state.database))
        self.runner = ToolRunner(registry=self.registry, base_context=context, approvals=self.approvals,
                                 emit=self.emit, session=self.session, output_limit=self._limit,
                                 guard=self.guard)
        self.loop = Loop(model=self.model, session=self.session, registry=self.registry, config=self.config,
                         emit=self.emit, runner=self.runner, context=self.request_context, guard=self.guard,
                         before_prompt=self.context.absorb if self.profile.live_context else None,
                         profile=self.profile)
        self.request_context.reset()  # a new loop is another session (or a fork, which starts a new one)

    def _render_static(self) -> str:
        render = short_prompt if self.profile.short_prompt else static_prompt
        return render(self.config, self.registry)

    def _limit(self, text: str, name: str) -> str:
        # The outputs folder is made (and checked) only for an output that is cut, not on every call.
        return limit_output(text, self.config.output_limit, save_dir=lambda: self.workspace.state_subdir(OUTPUTS),
                            name=name)

    def _tracking(self, emit: Callable[[ev.AnyEvent], None]) -> Callable[[ev.AnyEvent], None]:
        def tracked(event: ev.AnyEvent) -> None:
            emit(event)
            self.knowledge.observe(event)

        return tracked

    _problems_reported = False

    async def run_turn(self, prompt: str, turn_id: str, attached: Any = None) -> ev.TurnEnd:
        # Inside the turn, before the model is called, the user is asked about the commands the workspace's
        # stored state names (set here: a session switch builds a new loop).
        self.loop.before_request = self.stored_commands.confirm
        # The served context's probe (two requests to a local server) runs while the turn gets ready.
        served = asyncio.ensure_future(self._served_context()) if self._will_ask_served() else None
        if not self._problems_reported:
            # A corrupt or newer database leaves the session in memory: say so once, plainly.
            self._problems_reported = True
            for problem in self.state.problems:
                self.emit(ev.Error(message=problem, kind="store", turn_id=turn_id))
            if self._diverged:
                self.emit(ev.Checkpoint(action="diverged", files=self._diverged, turn_id=turn_id))
                self._diverged = []
        try:
            self.loop.while_sending.append(lambda: self.state.remember_prompt(prompt))
            self.knowledge.begin_turn(prompt, turn_id)
            if self.profile.knowledge and (later := await self.knowledge.prepare_turn()) is not None:
                self.loop.while_sending.append(later)
            await self.start_mcp(turn_id)
            self.request_context.begin_turn()
            if served is not None:
                self.loop.served = await served
        finally:
            if served is not None:
                served.cancel()  # an abort while the turn got ready: no probe left behind (a no-op once done)
        return await self.loop.run_turn(prompt, turn_id, attached)

    _ask_served = True

    def _will_ask_served(self) -> bool:
        return getattr(self.model, "served_context", None) is not None and self._ask_served

    async def _served_context(self) -> Any:
        """The context a local server serves (nbagent.model.served_context): asked at each turn's start
        while the server answers (it may be restarted with another size), never again once it did not."""
        probe = getattr(self.model, "served_context", None)
        if probe is None or not self._ask_served:
            return None
        served = await probe()
        self._ask_served = served is not None
        return served

    # ----- settings ----------------------------------------------------------------------------
    def reconfigure(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Apply setting changes to the live agent; returns what changed. Safe between two steps of a
        turn (it runs on the agent's loop): the next model call and the next decision use them."""
        fixed = sorted(set(changes) & set(FIXED_SETTINGS))
        if fixed:
            raise ConfigError(f"{', '.join(fixed)} cannot change on a live agent: make a new Agent")
        changes = self._with_defaults(changes)
        new = self.config.with_changes(**changes)
        changed = {k: getattr(new, k) for k in changes if getattr(new, k) != getattr(self.config, k)}
        if not changed:
            return {}
        self.config = new
        self.loop.config = new
        self.runner.base_context.config = new
        self.knowledge.config = new
        if "model" in changed:
            self._set_model(new.model)
        if {"toolsets", "memory", "extra_instructions"} & set(changed):
            self._rebuild_tools()
        return changed

    def _with_defaults(self, changes: dict[str, Any]) -> dict[str, Any]:
        """``DEFAULT`` values replaced by what the configuration gives, under this agent's profile (the
        offline model's small one keeps its tool sets), and for the model with none named the
        endpoint's own, as when the agent was built without one."""
        resets = [name for name, value in changes.items() if value is DEFAULT]
        if not resets:
            return changes
        configured = apply_profile(PROFILES[self.config.profile], AgentConfig.load(workspace=self.config.workspace))
        changes = {**changes, **{name: getattr(configured, name) for name in resets}}
        if "approval" in resets and not os.environ.get("NBAGENT_APPROVAL"):
            changes["approval"] = default_mode()  # as an agent built without one
        if "model" in resets and not changes["model"]:
            changes["model"] = default_model_name(self.config)
            if not changes["model"]:
                raise ConfigError(f"no configured model to go back to for {self.config.base_url}: "
                                  "name one (NBAGENT_MODEL or model=...)")
        return changes

    def _set_model(self, name: str | None) -> None:
        if name and hasattr(self.model, "set_name"):
            self.model.set_name(name)
            self._ask_served = True  # another model may be served with another context
        self.session.model = name or ""
        self.session.backend.update_session(self.session.id, model=name or "")

    def _rebuild_tools(self) -> None:
        self.registry = build_registry(self.config, extra_tools=self.extra_tools, kernel=self.kernel)
        self.mcp.install(self.registry, self.config)
        self.loop.registry = self.runner.registry = self.registry
        self._static_prompt = self._render_static()
        if self.config.memory and self.state.memory is None:
            self.state.memory = self.state.open_memory(self.config)
        elif not self.config.memory:
            self.state.memory = None
        self.request_context.invalidate()

    def settings(self) -> dict[str, Any]:
        """What ``reconfigure`` can change, as front ends show it."""
        c = self.config
        return {"model": self.session.model or c.model or "", "approval": c.approval, "toolsets": list(c.toolsets),
                "max_steps": c.max_steps, "memory": c.memory, "workspace": str(c.workspace),
                "enabled_toolsets": list(self.registry.enabled), "profile": self.profile.name,
                "review_before_writing": c.review_before_writing,
                "tools": self.registry.names(),
                # The offline model answers (nbagent.model.local): every front end shows a badge for it.
                "offline": bool(getattr(self.model, "offline", False)),
                # Whether the code nbagent starts is confined, and by what: every front end shows it.
                "sandbox": sandbox.current().describe(), "sandbox_active": sandbox.current().active}

    async def start_mcp(self, turn_id: str = "") -> None:
        """Start and list the enabled MCP servers not listed yet (see nbagent.mcp.manager)."""
        if await self.mcp.refresh(self.registry, self.emit, turn_id):
            self._static_prompt = self._render_static()

    # ----- sessions --------------------------------------------------------------------------
    def switch_session(self, selector: str) -> str:
        old = self.state
        self.state = open_state(self.config, self.model, selector)
        old.close()
        self.context.rebind(self.state)
        self._problems_reported = False
        self._build_loop()
        if selector != "new":
            self._recover()
        return self.session.id

    # ----- checkpoints -----------------------------------------------------------------------
    _diverged: list[str] = []

    def _recover(self) -> None:
        """After a resume: tell the model what a crash left unrecorded and what changed meanwhile."""
        note, diverged = self.guard.recover()
        if diverged:
            note = (note + " " if note else "") + diverged_note(diverged)
            self._diverged = diverged  # shown to the user at the next turn (nobody listens yet)
        if note:
            self.session.append([{"role": "user", "content": note, "note": "recovery"}])
            self.loop.reset_estimates()

    def undo(self, force: bool = False, turn: int | None = None) -> Restored:
        restored = self.guard.undo(force, turn)
        self._note_restored(restored)
        return restored

    def redo(self, force: bool = False, turn: int | None = None) -> Any:
        """The turn the last whole undo took back; with none, the newest partial undo still in force."""
        review = self.guard.review
        if self.guard.enabled and review is not None and self.guard.checkpoints.preview("redo") is None:
            last = review.last_undo()
            if last is not None and (turn is None or turn == last[0]):
                return self.review("redo", last[0], last[1])
        restored = self.guard.redo(force, turn)
        self._note_restored(restored)
        return restored

    def review(self, action: str, turn: int | None, only: Any = None) -> Any:
        """Keep, undo or redo rows of a turn (nbagent.checkpoints.review); a Reviewed."""
        from ..checkpoints.turn_guard import review_note

        done = self.guard.review_rows(action, turn, only)
        if action != "keep" and done.files:
            self.session.append([{"role": "user", "content": review_note(done), "note": action}])
            self.loop.reset_estimates()
            self.workspace.invalidate()
        return done

    def _note_restored(self, restored: Restored) -> None:
        # The conversation stays; this note keeps the model from assuming its edits are (not) there.
        self.session.append([{"role": "user", "content": undo_note(restored), "note": restored.action}])
        self.loop.reset_estimates()
        self.workspace.invalidate()

    def fork_session(self, up_to_turn: int | None) -> str:
        before = self.session.id
        self.state = self.state.fork(up_to_turn)
        self.context.rebind(self.state)
        self.context.moved(before)
        self._build_loop()
        return self.session.id

    async def compact(self) -> list[ev.Event]:
        # The session's own system prompt and tools, so the request shares the cached prefix.
        events = await summarize_session(self.model, self.session, self.emit, system=self.request_context.system(),
                                         tools=self.registry.specs() if self.profile.tool_steps is None else None)
        end = events[-1]
        if isinstance(end, ev.TurnEnd) and end.reason == "done":
            self.knowledge.save_summary(end.text)
            self.loop.reset_estimates()
            self.request_context.reset()  # the summary replaced the notes sent so far
        return events

    def _release_remote_kernels(self) -> None:
        """Release the records the kernels keep for this session's notebook_run calls, unless the session
        is stored: it can be opened again and undone then (a deleted one is released by its server)."""
        guard = getattr(self, "guard", None)
        if self.config.persist or guard is None or not isinstance(guard.kernel, RemoteLedger):
            return
        if guard.kernel.records:
            try:
                guard.kernel.release()
            except Exception as exc:  # a kernel or server gone: its records went with it
                log.warning("could not release the kernels' undo records: %s", exc)

    async def aclose(self) -> None:
        self.processes.kill_all()
        await asyncio.to_thread(self._release_remote_kernels)
        self.context.close()
        self.knowledge.close()
        await self.mcp.aclose()
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()
        self.state.close()


def _notebook_stores(context: ToolContext) -> list:
    """Where the agent's notebook edits go: undo and redo restore an open notebook the same way."""
    from ..tools.nbstores import stores

    return stores(context)
