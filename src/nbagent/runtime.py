"""AgentRuntime: the parts of an agent wired together (runs on the agent's worker thread).

Agent is the thread-safe facade; this is where the configuration becomes a
model, a workspace, a session, a tool registry and a loop.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from . import events as ev
from .config import AgentConfig
from .context.live import LiveContext
from .loop import Loop
from .mcp.manager import MCPManager
from .model.factory import make_model
from .procs import ProcessTracker
from .prompt import static_prompt
from .session import Session
from .toolrun import Approvals, ToolRunner
from .tools import build_registry
from .tools.context import ToolContext
from .turn_guard import TurnGuard, diverged_note, undo_note
from .checkpoints import Restored
from .tempfiles import sweep_in_background
from .workspace import Workspace

SUMMARY_PROMPT = """Write a summary of this conversation that can replace it entirely, so that the work can
go on from the summary alone. Use these headings: Goal; Files touched; Decisions; Commands and their
outcomes; What remains. Be specific (paths, names, numbers). Answer with the summary only."""


class AgentRuntime:
    def __init__(self, config: AgentConfig, *, emit: Callable[[ev.Event], None], model=None,
                 extra_tools=(), approver=None, kernel=None):
        self.config = config
        self.emit = self._tracking(emit)
        self._memory_block: str | None = None
        self.kernel = kernel
        self.extra_tools = list(extra_tools)
        self.workspace = Workspace(config.workspace)
        self.processes = ProcessTracker()
        self.model = model if model is not None else make_model(config)
        self.registry = build_registry(config, extra_tools=self.extra_tools, kernel=kernel)
        self.mcp = MCPManager(config, self.workspace, self.processes)
        self.mcp.install(self.registry)
        # kernel_run_auto lets code in the user's kernel run unasked in auto mode; an MCP tool still asks.
        self.approvals = Approvals(
            config.approval, emit, approver,
            auto_allowed=lambda tool: config.kernel_run_auto and not tool.toolset.startswith("mcp:"))
        self.state = _open_state(self)
        sweep_in_background(self.workspace.root)  # temporary files a killed write left behind
        self.context = LiveContext(self.state, config, self.emit)
        self._static_prompt = static_prompt(config, self.registry)
        from .knowledge.turn import TurnKnowledge

        self.knowledge = TurnKnowledge(config, state=lambda: self.state, emit=self.emit,
                                       workspace_root=self.workspace.root)
        self._knowledge_block = ""
        self._turn_id = ""
        self._build_loop()
        if (config.session or "new") != "new":
            self._recover()

    @property
    def session(self) -> Session:
        return self.state.session

    def _build_loop(self) -> None:
        self.guard = TurnGuard(self.workspace, self.session.id, self.emit,
                               enabled=self.config.checkpoints, journal=self.config.persist,
                               max_bytes=self.config.checkpoint_max_bytes)
        context = ToolContext(workspace=self.workspace, config=self.config, emit=self.emit,
                              processes=self.processes, state=self.state, kernel=self.kernel)
        self.guard.checkpoints.notebook_stores = lambda: _notebook_stores(context)
        self.runner = ToolRunner(registry=self.registry, base_context=context, approvals=self.approvals,
                                 emit=self.emit, session=self.session, output_limit=self._limit,
                                 guard=self.guard)
        self.loop = Loop(model=self.model, session=self.session, registry=self.registry, config=self.config,
                         emit=self.emit, runner=self.runner, prompt_parts=self._prompt_parts, guard=self.guard,
                         before_prompt=self.context.absorb)

    def _limit(self, text: str, name: str) -> str:
        from .limits import limit_output

        return limit_output(text, self.config.output_limit, save_dir=self.workspace.state_subdir("outputs"),
                            name=name)

    def _tracking(self, emit: Callable[[ev.Event], None]) -> Callable[[ev.Event], None]:
        def tracked(event: ev.Event) -> None:
            if isinstance(event, ev.MemoryChanged):
                self._memory_block = None  # re-read before the next step
            emit(event)
            self.knowledge.observe(event)

        return tracked

    def _prompt_parts(self) -> tuple[str, str, str]:
        # Memory is read from the database once per turn (and after this agent changes it),
        # not on every step: it is the same block unless a memory tool ran.
        if self._memory_block is None:
            self._memory_block = self.state.memory_block()
        # Instructions and the repo map are read once per turn; relevant memory is searched per step.
        static = "\n\n".join(p for p in (self._static_prompt, self._knowledge_block) if p)
        relevant = self.knowledge.relevant_block(self._turn_id)
        memory = "\n\n".join(p for p in (self._memory_block, relevant) if p)
        return static, self.state.todos_block(), memory

    _problems_reported = False

    async def run_turn(self, prompt: str, turn_id: str) -> ev.TurnEnd:
        if not self._problems_reported:
            # A corrupt or newer database leaves the session in memory: say so once, plainly.
            self._problems_reported = True
            for problem in getattr(self.state, "problems", ()) or ():
                self.emit(ev.Error(message=problem, kind="store", turn_id=turn_id))
            if self._diverged:
                self.emit(ev.Checkpoint(action="diverged", files=self._diverged, turn_id=turn_id))
                self._diverged = []
        self.state.remember_prompt(prompt)
        self._memory_block = None  # another kernel may have changed the project's memory
        self._turn_id = turn_id
        self.knowledge.begin_turn(prompt, turn_id)
        self._knowledge_block = await self.knowledge.static_block_for_turn()
        await self.start_mcp(turn_id)
        return await self.loop.run_turn(prompt, turn_id)

    async def start_mcp(self, turn_id: str = "") -> None:
        """Start and list the enabled MCP servers not listed yet (see nbagent.mcp.manager)."""
        if await self.mcp.refresh(self.registry, self.emit, turn_id):
            self._static_prompt = static_prompt(self.config, self.registry)

    # ----- sessions --------------------------------------------------------------------------
    def switch_session(self, selector: str) -> str:
        old = self.state
        self.state = _open_state(self, selector)
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

    def redo(self, force: bool = False, turn: int | None = None) -> Restored:
        restored = self.guard.redo(force, turn)
        self._note_restored(restored)
        return restored

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

    def set_model(self, name: str) -> None:
        self.config = self.config.with_changes(model=name)
        if hasattr(self.model, "set_name"):
            self.model.set_name(name)
        self.session.model = name
        self.session.backend.update_session(self.session.id, model=name)

    async def compact(self):
        """Replace the transcript on the wire by a model-written summary; a failure changes nothing."""
        from .model.base import ModelRequest, ResponseDone
        from .result import RunResult

        messages = [*self.session.wire_messages(), {"role": "user", "content": SUMMARY_PROMPT}]
        request = ModelRequest(system="You summarise coding sessions.", messages=messages, tools=[])
        summary = ""
        try:
            async for chunk in self.model.stream(request):
                if isinstance(chunk, ResponseDone):
                    summary = chunk.message.get("content") or ""
        except Exception as exc:
            error = ev.Error(message=f"compaction failed, nothing changed: {exc}", kind="compact")
            self.emit(error)
            end = ev.TurnEnd(reason="error")
            return RunResult.from_events([error, end], end, self.session.id)
        if not summary.strip():
            end = ev.TurnEnd(reason="error", text="")
            self.emit(ev.Error(message="compaction failed: the model wrote no summary; nothing changed",
                               kind="compact"))
            return RunResult.from_events([end], end, self.session.id)
        before = len(self.session.wire_messages())
        self.knowledge.save_summary(summary)
        self.session.set_summary({"role": "user", "summary": True,
                                  "content": "Summary of the conversation so far:\n\n" + summary.strip()})
        self.loop.reset_estimates()
        event = ev.Compacted(before=before, after=1, message=f"transcript of {before} messages replaced "
                                                              "by a summary")
        self.emit(event)
        end = ev.TurnEnd(reason="done", text=summary.strip())
        return RunResult.from_events([event, end], end, self.session.id)

    async def aclose(self) -> None:
        self.processes.kill_all()
        self.context.close()
        self.knowledge.close()
        await self.mcp.aclose()
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()
        self.state.close()


def _notebook_stores(context: ToolContext) -> list:
    """Where the agent's notebook edits go: undo and redo restore an open notebook the same way."""
    from .tools.nbdoc import stores

    return stores(context)


def _open_state(runtime: AgentRuntime, selector: str | None = None):
    from .state import open_state

    return open_state(runtime.config, runtime.model, selector or runtime.config.session)
