"""The %agent line magic and %%agent cell magic."""

from __future__ import annotations

import asyncio
import inspect
import queue
import re
import shlex
import sys
import weakref
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from ... import events as ev
from ...config import APPROVAL_MODES, DEFAULT
from ...errors import MissingSetting, NbagentError
from ...ids import short_id
from ...engine.open_in_jupyter import with_context
from .commands import run_command
from .frontend import use_widgets
from ..widgets.view_registry import hub_for
from .agent_keeper import AgentKeeper, KeeperError
from .history_source import KernelHistory
from .notebook_path import own_context
from .options import split_options
from .attach_specs import last_error_prompt, resolve
from .replay_source import notebook_cells
from ...render.terminal import TerminalRenderer
from .text_view import ModeLines, TextBlock, TextFollower, text_approver, text_renderer


_CHECK = re.compile(r"^check(\s+\S+\.ipynb)?\s*$")
_OUT = re.compile(r"^(Out\[\d+\]|_\d+)$")
_FIX = re.compile(r"^fix\s*$", re.I)
"""``%agent fix``: the kernel's last error as the prompt (attach_specs); "fix the tests" stays a prompt."""
"""``%agent check`` and ``%agent check NOTEBOOK.ipynb``: the notebook check, not a prompt."""


@magics_class
class AgentMagics(Magics):
    def __init__(self, shell):
        super().__init__(shell)
        self.keeper = AgentKeeper(shell)
        self.history = KernelHistory(shell, self.keeper)
        self._views: "weakref.WeakSet" = weakref.WeakSet()
        self._handles: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        """The display of each view a waiting cell shows, updated once its turn ends."""
        self.last_view = None
        self._awaiting = False
        self._mode_lines = ModeLines()

    @magic_arguments()
    @argument("-c", "--continue", dest="continue_", action="store_true",
              help="continue the newest session of this notebook")
    @argument("-r", "--resume", metavar="ID", help="continue session ID (or a unique prefix)")
    @argument("-n", "--new", action="store_true", help="start a new session")
    @argument("--model", help="the model to use from now on (default: the configured one again)")
    @argument("--toolsets", help="comma-separated tool sets to enable (core is always on; default: the "
                                 "configured ones again)")
    @argument("--approval", choices=(*APPROVAL_MODES, "default"), help="ask, auto or read-only, from now on")
    @argument("--no-memory", dest="memory", action="store_false", default=None,
              help="do not load or write project memory, from now on")
    @argument("--memory", dest="memory", action="store_true", default=None, help="switch memory back on")
    @argument("--workspace", help="the workspace root, from now on")
    @argument("--wait", action="store_true", help="block until the turn ends (scripts, tested notebooks)")
    @argument("-a", "--attach", action="append", metavar="WHAT",
              help="attach an output to the prompt: Out[5], a cell id, or a variable (may be repeated)")
    @argument("prompt", nargs="*", help="the prompt, or a slash command such as /todos")
    @line_cell_magic
    def agent(self, line: str = "", cell: str | None = None):
        """Ask the coding agent. The turn runs in the background with a live view; %agent cells run
        during a turn queue behind it. With %%agent the cell body is the prompt.

        Examples::

            %agent what does this repository do?
            %agent --wait -c fix the failing test
            %agent fix                      (the kernel's last error: its cell, traceback and variables)
            %agent --attach Out[5] what stands out in this chart?
            %%agent --approval auto
            Write tests for utils.py, then run them.

        Options that change the agent (--model, --toolsets, --approval, --no-memory/--memory,
        --workspace) apply from now on in this notebook. Slash commands: %agent /help.
        """
        options, prompt = split_options(line, _parser())
        if cell is not None:
            prompt = "\n".join(p for p in (prompt, cell.strip()) if p)
        args = self._parse(options)
        try:
            said = self._apply_options(args)
            if _CHECK.match(prompt):  # %agent check [x.ipynb]; "check the tests ..." stays a prompt
                prompt = "/" + prompt
            if prompt.startswith("/"):
                return self._show(run_command(self.keeper, prompt, self._clear_views))
            if _FIX.match(prompt):
                prompt = last_error_prompt(cast(Any, self.shell), self._cells())
            if not prompt:
                print("\n".join(said) if said else self._status())
                return None
            attach = self._attachments(args.attach) if args.attach else None
            for message in said:
                print(message)
            return self._run(prompt, wait=args.wait or not self.keeper.background(), attach=attach)
        except MissingSetting as exc:  # worded as a notebook gives the setting
            raise UsageError(exc.worded(f"pass %agent --{exc.setting} NAME")) from None
        except (KeeperError, NbagentError, RuntimeError, TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None

    async def agent_awaiting(self, line: str, cell: str | None = None):
        """What a ``%agent --wait`` line runs as in a kernel (see ``rewrite_agent_lines``): the cell awaits the
        turn, so the kernel keeps handling widget messages and the approval card's buttons work."""
        line = cast(Any, self.shell).var_expand(line)  # $name and {expr}, as run_line_magic would
        self._awaiting = True
        try:
            pending = cast(Any, self.agent)(line, cell)  # the magic, as %agent calls it
        finally:
            self._awaiting = False
        if inspect.isawaitable(pending):
            await pending

    # ----- options ---------------------------------------------------------------------------
    def _parse(self, options: str):
        try:
            args = _parser().parse_args(shlex.split(options))
        except ValueError as exc:  # an unclosed quote
            raise UsageError(f"{exc}\n{_usage(self.agent)}") from None
        except UsageError as exc:
            raise UsageError(f"{exc}\n{_usage(self.agent)}") from None
        if sum(bool(x) for x in (args.continue_, args.resume, args.new)) > 1:
            raise UsageError("use only one of -c/--continue, -r/--resume and -n/--new\n" + _usage(self.agent))
        return args

    def _apply_options(self, args) -> list[str]:
        toolsets = tuple(s.strip() for s in args.toolsets.split(",") if s.strip()) if args.toolsets else None
        said = self.keeper.configure(model=_or_default(args.model), toolsets=_or_default(toolsets),
                                     approval=_or_default(args.approval),
                                     memory=args.memory, workspace=args.workspace)
        selector = "new" if args.new else "continue" if args.continue_ else args.resume
        if selector:
            fresh = self.keeper.agent is None
            session_id = self.keeper.switch(selector)
            if not (fresh and selector == "new"):
                said.append(f"session {session_id}")
        return said

    def _status(self) -> str:
        agent = self.keeper.get()
        title = f" ({agent.session.title})" if agent.session.title else ""
        queued = f", {agent.queued} queued" if agent.queued else ""
        return (f"session {agent.session_id}{title}, model {agent.session.model or agent.config.model}, "
                f"workspace {agent.config.workspace}{', running' if agent.busy else ''}{queued}. "
                "%agent /help lists the commands.")

    def _cells(self) -> list[dict] | None:
        """This notebook's cells (for cell ids), None when the kernel cannot find its notebook."""
        try:
            return notebook_cells(cast(Any, self.shell))
        except Exception:  # a prompt without cell ids is still a prompt
            return None

    def _attachments(self, specs: list[str]) -> list[Any]:
        ns = cast(Any, self.shell).user_ns
        cells = self._cells() if any(not _OUT.match(s.strip()) and s.strip() not in ns for s in specs) else None
        return [item for spec in specs for item in resolve(cast(Any, self.shell), spec, cells)]

    # ----- running a prompt ------------------------------------------------------------------
    def _run(self, prompt: str, wait: bool, attach: list[Any] | None = None):
        agent = self.keeper.get()
        turn_id = short_id("turn_")
        self._sync_history(agent, turn_id)
        sent = with_context(prompt, own_context(self.shell, self.keeper.place, agent.config.workspace))
        if use_widgets(self.keeper.view_mode(), self.shell):
            view, inbox = self._show_view(agent, prompt, turn_id, wait), None
            future = hub_for(agent).submit(view, sent, attach=attach)
        else:
            view, inbox = None, self._text_inbox(agent, turn_id, background=not wait)
            future = agent.submit(sent, turn_id=turn_id, attach=attach)
        future.add_done_callback(lambda f: setattr(self.keeper, "last_result", f.result()))
        if wait and self._awaiting:
            return self._wait_async(agent, future, view, inbox)
        if wait:
            self._wait(agent, future, view, inbox)
        return None

    def _sync_history(self, agent, turn_id: str) -> None:
        """The kernel's history goes with the prompt, as it is now (attached by default; /context remove
        kernel declines it)."""
        try:
            self.history.for_prompt(agent, turn_id)
        except Exception as exc:  # the prompt matters more than its context
            print(f"[kernel history not attached: {exc}]")

    def _show_view(self, agent, prompt: str, turn_id: str, wait: bool):
        from IPython.display import display

        view = hub_for(agent).turn_view(prompt, turn_id)
        self._views.add(view)
        self.last_view = view
        # When the turn ends the displayed view is sent again, so that the stored output's text/plain (what
        # shows where widgets do not render) is the final state: by the waiting cell itself (``_finish``,
        # in the cell's own context, which nbclient needs), or when it ends for a background turn.
        self._handles[view] = handle = display(view, display_id=True)
        if handle is not None and not wait:
            view.on_end(lambda: handle.update(view))
        return view

    def _text_inbox(self, agent, turn_id: str, background: bool):
        """Text mode: print from the agent's thread (background) or queue for the waiting cell. Either
        way the renderer starts from the agent's snapshot and prints only this turn."""
        header = self._mode_lines.header(agent)
        if background:
            TextFollower(agent, follow=turn_id, header=header)  # it unsubscribes at this turn's end
            return None
        inbox: queue.Queue = queue.Queue()

        def on_event(event: ev.AnyEvent) -> None:
            inbox.put(event)  # every event: the renderer's state follows them all
            if isinstance(event, ev.TurnEnd) and event.turn_id == turn_id:
                unsubscribe()

        state, unsubscribe = agent.watch(on_event)  # before the turn is submitted: it misses nothing
        # In a kernel the turn is written as one output (a stored notebook keeps it whole); a terminal
        # IPython prints it as it streams.
        out = TextBlock() if getattr(self.shell, "kernel", None) is not None else sys.stdout
        out.write(header)
        return inbox, text_renderer(out, state=state, follow=turn_id), out

    def _wait(self, agent, future, view, inbox) -> None:
        """Block until the turn ends (a terminal shell). An interrupt aborts the turn, then propagates."""
        try:
            while not future.done():
                if inbox is not None:
                    self._drain(agent, *inbox)
                try:
                    future.result(timeout=0.05)
                except FutureTimeout:
                    pass
        except KeyboardInterrupt:
            self._interrupted(agent, future, view, inbox)
            raise
        self._finish(view, inbox, agent)
        self.keeper.last_result = future.result()

    async def _wait_async(self, agent, future, view, inbox) -> None:
        try:
            while not future.done():
                if inbox is not None:
                    self._drain(agent, *inbox)
                await asyncio.sleep(0.05)
        except (KeyboardInterrupt, asyncio.CancelledError):
            self._interrupted(agent, future, view, inbox)
            raise
        self._finish(view, inbox, agent)
        self.keeper.last_result = future.result()

    def _interrupted(self, agent, future, view, inbox) -> None:
        """A kernel interrupt during --wait: abort the turn and leave the session consistent."""
        agent.abort()
        future.result(timeout=30)
        self._finish(view, inbox, agent, after="\n[interrupted: the turn was aborted; the session is saved up to here]\n")

    def _finish(self, view, inbox, agent, after: str = "") -> None:
        """The turn has ended: its view shows the end, its text (and ``after``) is written."""
        if view is not None:
            view.wait(5)
            view.flush()
            handle = self._handles.pop(view, None)
            if handle is not None:
                handle.update(view)
        out = sys.stdout
        if inbox is not None:
            self._drain(agent, *inbox)
            out = inbox[2]
        out.write(after)
        _release(out)

    def _drain(self, agent, inbox: queue.Queue, renderer: TerminalRenderer, out) -> None:
        """Write what came since the last tick in one write (one output chunk, not one per delta)."""
        pending: list[str] = []
        while True:
            try:
                event = inbox.get_nowait()
            except queue.Empty:
                break
            pending.append(renderer.render(event).text)
            if isinstance(event, ev.ApprovalRequest) and event.turn_id == renderer.follow:
                out.write("".join(pending))
                _release(out)  # the question needs the turn so far on screen above it
                pending = []
                agent.decide(event.call_id, text_approver(out)(event))
        if any(pending):
            out.write("".join(pending))
            out.flush()

    # ----- output ----------------------------------------------------------------------------
    def _show(self, value):
        if value is None:
            return None
        if isinstance(value, str):
            print(value)
            return None
        return value  # a DataFrame or a widget: the display hook shows it

    def _clear_views(self) -> int:
        count = 0
        for view in list(self._views):
            if view.ended:
                view.layout.display = "none"
                self._views.discard(view)
                count += 1
        return count


def _parser() -> Any:
    """%agent's argument parser (magic_arguments puts it on the magic function)."""
    return cast(Any, AgentMagics.agent).parser


def _usage(magic) -> str:
    return magic.parser.format_usage().replace("::\n\n", "usage:\n", 1)


def load_ipython_extension(ipython) -> None:
    """``%load_ext nbagent``: register %agent and %%agent, and warm the first turn in the background."""
    from ...engine.warmup import start

    start(extra=KERNEL_FIRST_AGENT)
    _warm_memory()
    magics = AgentMagics(ipython)
    ipython.register_magics(magics)
    magics.history.register()
    ipython.push({AWAIT_NAME: magics.agent_awaiting}, interactive=False)
    if rewrite_agent_lines not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(rewrite_agent_lines)


KERNEL_FIRST_AGENT = ("nbagent.jupyter.kernel.server_client", "nbagent.jupyter.kernel.bridge", "nbagent.tools.kernel",
                      "nbagent.knowledge.turn")
"""What the kernel's first agent imports beyond the engine (bench/coldstart.py, issue 41)."""
AWAIT_NAME = "_nbagent_agent_awaiting"


def _release(out) -> None:
    """Write what a TextBlock kept (nothing to do for a stream that writes at once)."""
    release = getattr(out, "release", None)
    if release is not None:
        release()


def _warm_memory() -> None:
    """Load memory's embedder while the user types (its own daemon thread: the engine's warm-up, which
    the first agent waits for, stays as short as it was)."""
    from ...config import AgentConfig
    from ...errors import ConfigError
    from ...memory.embeddings import warm_in_background

    try:
        config = AgentConfig.load()
    except ConfigError:
        return  # the first %agent reports it
    if config.memory:
        warm_in_background(config)


def rewrite_agent_lines(lines: list[str]) -> list[str]:
    """Two rewrites of %agent lines, before IPython's own transformers see them:

    - a question: ``%agent why does this fail?`` is a prompt, not IPython's ``name?`` help
      (``%agent?`` still shows the help);
    - in a kernel, ``%agent --wait ...`` and ``%%agent --wait`` cells become ``await ...``: the cell
      awaits the turn instead of blocking the kernel, so the widgets' buttons keep working (ipykernel
      dispatches widget messages while a cell awaits; it cannot while a cell blocks).
    """
    if lines and lines[0].startswith("%%agent") and _waits(lines[0][len("%%agent"):]):
        body = "".join(lines[1:])
        return [f"await {AWAIT_NAME}({lines[0][len('%%agent'):].strip()!r}, {body!r})\n"]
    return [_rewrite_line(line) for line in lines]


def _rewrite_line(line: str) -> str:
    text = line.rstrip("\n")
    if not text.startswith("%agent "):
        return line
    rest = text[len("%agent "):]
    if _waits(rest):
        return f"await {AWAIT_NAME}({rest!r})" + line[len(text):]
    if not text.rstrip().endswith("?") or not rest.strip().rstrip("?").strip():
        return line
    return f"get_ipython().run_line_magic('agent', {rest!r})" + line[len(text):]


def _waits(rest: str) -> bool:
    """``--wait`` among the options, in a kernel (a terminal shell blocks: it has no widgets)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    options, _ = split_options(rest, AgentMagics.agent.parser)
    return "--wait" in options.split()


def unload_ipython_extension(ipython) -> None:
    """``%unload_ext nbagent``: close the agent and remove the magics."""
    magics = ipython.magics_manager.registry.pop("AgentMagics", None)
    if magics is not None:
        magics.history.unregister()
        magics.keeper.close()
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("agent", None)
    if rewrite_agent_lines in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(rewrite_agent_lines)
    ipython.user_ns.pop(AWAIT_NAME, None)


def _or_default(value):
    """``default`` for --model, --toolsets or --approval: back to what the configuration gives."""
    return DEFAULT if value in ("default", ("default",)) else value
