"""The extension application: configuration, the hub of open sessions, the handlers.

Configuration (jupyter_server_config.py or the command line)::

    c.NbAgentServer.model = "gpt-4.1-mini"        # else NBAGENT_MODEL / the endpoint's default
    c.NbAgentServer.approval = "ask"              # ask | auto | read-only
    c.NbAgentServer.toolsets = ["core", "git"]
    c.NbAgentServer.agent_options = {"max_steps": 30}
    c.NbAgentServer.model_factory = make_model    # tests and embedding: returns a Model object

The endpoint and key come from the environment like everywhere else
(OPENAI_BASE_URL, OPENAI_API_KEY; see docs/configuration.md).
"""

from __future__ import annotations

import asyncio
import gc
import threading

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Callable, Dict, Float, Int, List, Unicode

from ...config import DEFAULT
from ...tools import nbdoc
from . import check_route, complete_route, context_routes, handlers
from .hub import SessionHub
from .completions import CompletionService
from .kernel_secret import KernelLink, KernelNotebooksHandler
from .notebooks import InProcessStore, ServerNotebooks
from .views import OpenViews, ViewsSocket
from .services import WorkspaceServices
from .settings import ServerSettings


class NbAgentServer(ExtensionApp):
    name = "nbagent"
    description = "nbagent: the agent behind the JupyterLab side panel"
    load_other_extensions = True

    model = Unicode(None, allow_none=True, config=True,
                    help="Model name for the agents this server opens (default: NBAGENT_MODEL).")
    toolsets = List(Unicode(), default_value=None, allow_none=True, config=True,
                    help="Tool sets the agents may use (default: NBAGENT_TOOLSETS, or all).")
    approval = Unicode(None, allow_none=True, config=True,
                       help='Approval mode: "ask", "auto" or "read-only" (default: NBAGENT_APPROVAL, or ask).')
    agent_options = Dict(config=True, help="More keyword arguments for Agent(), e.g. {'max_steps': 30}.")
    model_factory = Callable(None, allow_none=True, config=True,
                             help="Called with the session id for each agent the server opens; returns a "
                                  "Model object (e.g. nbagent.testing.ScriptedModel). Overrides model. "
                                  "For tests and embedding.")
    idle_close_seconds = Float(60.0, config=True,
                               help="Close a session's agent this long after its last tab disconnected.")
    worker_threads = Int(4, config=True, help="Threads for blocking work: the database, the file walk.")
    warm_offline_model = Bool(True, config=True,
                              help="When the agents would use the offline model (nothing configured, "
                                   "jupyter-nbagent[local] installed), start it with the server, so the first "
                                   "answer does not wait for it; kernels borrow it (docs/offline.md).")
    mcp_approval = Unicode("ask", config=True,
                           help='Writes by outside agents through /nbagent/mcp: "ask" (in the JupyterLab '
                                'panel; denied when no panel is open), "auto" (run) or "read-only" (denied).')
    mcp_approval_timeout = Float(300.0, config=True,
                                 help="Seconds an outside agent's call waits for an answer in the panel before "
                                      "it is denied.")
    mcp_toolsets = List(Unicode(), default_value=["notebook", "kernel"], config=True,
                        help="Tool sets served at /nbagent/mcp: notebook, kernel (this server's kernels), core, "
                             "edit-plus, git.")

    def initialize_settings(self) -> None:
        self.executor = ThreadPoolExecutor(self.worker_threads, thread_name_prefix="nbagent-server")
        serverapp = self.serverapp
        assert serverapp is not None, "the server initialises its extensions"
        root = Path(serverapp.root_dir).expanduser().resolve()
        self.services = WorkspaceServices(root, self.executor)
        initial: dict[str, Any] = {"model": self.model, "approval": self.approval}
        if self.toolsets is not None:
            initial["toolsets"] = list(self.toolsets)
        self.agent_settings = ServerSettings().updated(initial)
        self.hub = SessionHub(self.make_agent, self.executor, idle_close=self.idle_close_seconds)
        self.completions = CompletionService(self)
        self.hub.before_prompt = lambda session_id, context: context_routes.offer_for_prompt(self, session_id, context)
        self._start_notebooks(root)
        self.mcp_route = self._mcp_route(root)
        self.log.info("nbagent: workspace %s", root)
        # The server holds hundreds of thousands of long-lived objects after start-up; full garbage
        # collections scanning them all paused the event loop for 350-500 ms under a fast stream.
        # Freezing them moves them out of the collector's scans (objects made later are unaffected).
        gc.freeze()
        from ...engine.warmup import start

        start()  # the first session's agent then starts without importing the SDK (a daemon thread)
        if self.warm_offline_model and self.model_factory is None:
            threading.Thread(target=self._start_offline_model, args=(root,), name="nbagent-offline-model",
                             daemon=True).start()

    def _start_offline_model(self, root: Path) -> None:
        """Load the offline model now, if the agents this server opens would use it (a daemon thread)."""
        from ...config import AgentConfig
        from ...model import local
        from ...model.factory import uses_local

        try:
            options = {**self.agent_options, **self.agent_settings.agent_options()}
            config = AgentConfig.load(workspace=root, **options)
            if uses_local(config) and local.local_available():
                local.shared_server(borrow=False)
        except Exception as exc:  # noqa: BLE001 - the first turn starts it, or says what is wrong
            self.log.info("nbagent: the offline model was not started in advance: %s", exc)

    def _start_notebooks(self, root: Path) -> None:
        """The server becomes the one writer of notebooks: for its own agents and its kernels' agents."""
        serverapp = self.serverapp
        assert serverapp is not None, "the server initialises its extensions"
        self.views = OpenViews()
        self.notebooks = ServerNotebooks(serverapp, root, self.executor, views=self.views)
        self.kernel_link = KernelLink(serverapp.connection_url, root)
        serverapp.io_loop.add_callback(lambda: self.kernel_link.write(serverapp.connection_url))
        asyncio_loop = cast(Any, serverapp.io_loop).asyncio_loop  # tornado's AsyncIOLoop
        self.notebook_store = InProcessStore(self.notebooks, asyncio_loop)
        nbdoc.register_store(self.notebook_store)

    def _mcp_route(self, root: Path):
        from .mcp_route import MCPRoute

        from ..remote.kernel_tools import kernel_toolset, server_kernels

        kernels = kernel_toolset(server_kernels(self.serverapp), choose=True)
        try:
            return MCPRoute(root, approval=self.mcp_approval, toolsets=tuple(self.mcp_toolsets), hub=self.hub,
                            approval_timeout=self.mcp_approval_timeout, extra=[kernels])
        except ImportError:  # the mcp extra is not installed: the route answers 503
            return None

    def initialize_handlers(self) -> None:
        from .mcp_route import ROUTES as MCP_ROUTES

        self.handlers.extend(handlers.ROUTES)
        self.handlers.extend(MCP_ROUTES)
        self.handlers.extend(context_routes.ROUTES)
        self.handlers.extend(check_route.ROUTES)
        self.handlers.extend(complete_route.ROUTES)
        self.handlers.append((r"/nbagent/api/kernel/notebooks", KernelNotebooksHandler))
        self.handlers.append((r"/nbagent/api/views/ws", ViewsSocket))

    def make_agent(self, session_id: str):
        """The Agent of one session (blocking: the hub calls it on a worker thread)."""
        from ...engine.warmup import settle

        settle()  # the engine's imports, if the start-up warm-up is still doing them
        from ...engine.agent import Agent

        options = {**self.agent_options, **self.agent_settings.agent_options()}
        if self.model_factory is not None:
            options["model"] = self.model_factory(session_id)
        return Agent(workspace=self.services.root, session=session_id, origin=".", **options)

    async def update_settings(self, changes) -> ServerSettings:
        """New settings: for the agents opened from now on, and live for the open ones."""
        before, self.agent_settings = self.agent_settings, self.agent_settings.updated(changes)
        live = {k: self.agent_options.get(k, v) if v is DEFAULT else v  # the server's configuration first
                for k, v in self.agent_settings.live_options().items()
                if getattr(before, k) != getattr(self.agent_settings, k)}
        await self.hub.reconfigure(**live)
        return self.agent_settings

    async def model_choices(self) -> dict[str, Any]:
        """What the panel's model picker offers: the configured names and the endpoint's /models list."""
        from ...config import AgentConfig
        from ...model.catalog import model_choices

        configured = [self.agent_settings.model, self.model, self.agent_options.get("model")]
        config = await asyncio.get_running_loop().run_in_executor(
            self.executor, lambda: AgentConfig.load(workspace=self.services.root))
        return (await model_choices(config, [*configured, config.model])).to_dict()

    async def stop_extension(self) -> None:
        if self.mcp_route is not None:
            await self.mcp_route.stop()
        nbdoc.unregister_store(self.notebook_store)
        self.kernel_link.close()
        await self.hub.shutdown()
        self.services.close()
        self.executor.shutdown(wait=False)
