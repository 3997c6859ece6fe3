"""A running kernel of a Jupyter server, found by id, notebook path or name, that runs code for an outside agent.

Two ways to reach one, with one interface (``execute``, ``interrupt``, ``busy``):
- ``ServerKernel``: a kernel of a Jupyter server elsewhere (``nbagent mcp serve --jupyter-url``),
  through the server's REST API (listing, interrupt) and its kernel WebSocket (``/api/kernels/<id>/
  channels``, the JSON form of the messaging protocol that JupyterLab speaks). Messages are built by
  jupyter_client's ``Session``; the WebSocket is tornado's client. The reading loop is written here
  because jupyter_server's ``GatewayKernelClient`` (the one library client for this socket) sends no
  token and polls its queues in a busy loop, and the datalayer ``jupyter-kernel-client`` package pulls
  in pyarrow; what is needed (one request, its replies until the kernel is idle) is short.
- ``LocalKernel``: a kernel of the server this code runs in (the ``/nbagent/mcp`` route), through
  its kernel manager's jupyter_client ``AsyncKernelClient``.

Code runs with ``store_history=False``: no execution count, no In/Out entries in the user's notebook.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Iterable
from urllib.parse import quote

from ...errors import ToolError
from ...render.escape import strip_ansi



class Outcome:
    """The IOPub messages of one execute request, as kernel_run's outcome
    (``{"stdout", "stderr", "result", "error"}``, as nbagent.tools.kernel.KernelBridge.run_code returns)."""

    def __init__(self) -> None:
        self.started = False
        """The kernel began this request (it was not, or no longer, queued behind other code)."""
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.result: str | None = None
        self.error: str | None = None
        self.displays: list[dict] = []

    def add(self, msg: dict) -> None:
        kind, content = msg.get("msg_type") or msg["header"]["msg_type"], msg.get("content") or {}
        self.started = True  # any message of this request: the kernel is on it
        if kind == "stream":
            (self.stderr if content.get("name") == "stderr" else self.stdout).append(str(content.get("text", "")))
        elif kind == "execute_result":
            self.result = str((content.get("data") or {}).get("text/plain", ""))
        elif kind == "display_data":
            data = content.get("data")
            self.displays.append(data if isinstance(data, dict) else {})
        elif kind == "error":
            trace = "\n".join(str(line) for line in content.get("traceback") or [])
            self.error = strip_ansi(trace) or f"{content.get('ename')}: {content.get('evalue')}"

    def as_dict(self) -> dict:
        return {"stdout": "".join(self.stdout), "stderr": "".join(self.stderr), "result": self.result,
                "error": self.error, "displays": self.displays}


def pick_kernel(query: str, kernels: Iterable[dict], sessions: Iterable[dict]) -> str:
    """The id of the kernel ``query`` names: a kernel id, a notebook's path or session name, or a kernel
    name (``python3``) when exactly one kernel of that name runs. Raises ToolError listing what runs."""
    kernels, sessions = list(kernels), list(sessions)
    by_id = {k["id"]: k for k in kernels}
    if query in by_id:
        return query
    wanted = query.strip().lstrip("/")
    for session in sessions:
        kernel = session.get("kernel") or {}
        if kernel.get("id") in by_id and wanted in (str(session.get("path", "")).lstrip("/"), session.get("name")):
            return kernel["id"]
    named = [k["id"] for k in kernels if k.get("name") == query]
    if len(named) == 1:
        return named[0]
    running = [f"{k['id']} ({k.get('name')}" + "".join(
        f", {s.get('path')}" for s in sessions if (s.get("kernel") or {}).get("id") == k["id"]) + ")"
        for k in kernels]
    why = f"{len(named)} kernels are named {query!r}; give an id or a notebook path" if named else \
        f"no running kernel is {query!r}"
    raise ToolError(f"{why}. Running: {'; '.join(running) or 'none'}")


class ServerKernel:
    """One kernel of a Jupyter server at ``base_url`` (``http://host:port/base/``), with a token."""

    def __init__(self, base_url: str, token: str, kernel_id: str, label: str = ""):
        self.base_url = base_url.rstrip("/") + "/"
        self.token = token
        self.kernel_id = kernel_id
        self.label = label or kernel_id

    @classmethod
    async def find(cls, base_url: str, token: str, query: str) -> "ServerKernel":
        server = cls(base_url, token, "")
        kernels, sessions = await server._get("api/kernels"), await server._get("api/sessions")
        kernel_id = pick_kernel(query, kernels, sessions)
        return cls(base_url, token, kernel_id, label=query)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"} if self.token else {}

    async def _get(self, path: str, method: str = "GET") -> Any:
        from tornado.httpclient import AsyncHTTPClient, HTTPClientError

        try:
            response = await AsyncHTTPClient().fetch(self.base_url + path, method=method, headers=self._headers(),
                                                     body=b"" if method == "POST" else None, request_timeout=30)
        except HTTPClientError as exc:
            raise ToolError(f"the Jupyter server at {self.base_url} answered {exc.code} to {path}"
                            + (" (check the token)" if exc.code in (401, 403) else "")) from None
        except OSError as exc:
            raise ToolError(f"cannot reach the Jupyter server at {self.base_url}: {exc}") from None
        return json.loads(response.body) if response.body else None

    async def interrupt(self) -> None:
        await self._get(f"api/kernels/{quote(self.kernel_id)}/interrupt", method="POST")

    async def busy(self) -> bool:
        """The kernel runs code now (the server's view of it)."""
        model = await self._get(f"api/kernels/{quote(self.kernel_id)}")
        return isinstance(model, dict) and model.get("execution_state") == "busy"

    async def execute(self, code: str, *, silent: bool = False, outcome: Outcome | None = None) -> dict:
        """Run ``code``; returns the outcome once the kernel replied and went idle (cancel to stop waiting).
        ``outcome`` collects it as it comes (its ``started`` tells whether the kernel began it)."""
        from jupyter_client.jsonutil import json_default
        from jupyter_client.session import Session
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        session = Session(username="nbagent-mcp")
        ws_url = re.sub(r"^http", "ws", self.base_url) + \
            f"api/kernels/{quote(self.kernel_id)}/channels?session_id={session.session}"
        try:
            ws = await websocket_connect(HTTPRequest(ws_url, headers=self._headers(), request_timeout=30))
        except Exception as exc:
            raise ToolError(f"cannot open kernel {self.label}'s channels at {self.base_url}: {exc}") from None
        try:
            msg = session.msg("execute_request", {"code": code, "silent": silent, "store_history": False,
                                                  "user_expressions": {}, "allow_stdin": False,
                                                  "stop_on_error": True})
            msg["channel"] = "shell"
            await ws.write_message(json.dumps(msg, default=json_default))
            return await _collect(ws, msg["header"]["msg_id"], self.label, outcome or Outcome())
        finally:
            ws.close()


async def _collect(ws: Any, msg_id: str, label: str, outcome: Outcome) -> dict:
    replied, idle = False, False
    while not (replied and idle):
        raw = await ws.read_message()
        if raw is None:
            raise ToolError(f"kernel {label}'s channels closed before the run ended (did the kernel die?)")
        if isinstance(raw, bytes):
            continue  # binary frames carry buffers (widgets' comms), never an execute's output
        msg = json.loads(raw)
        if (msg.get("parent_header") or {}).get("msg_id") != msg_id:
            continue  # another client's traffic on the same kernel
        kind = msg.get("msg_type") or msg["header"]["msg_type"]
        if msg.get("channel") == "shell" and kind == "execute_reply":
            replied = True
        elif kind == "status":
            outcome.started = True
            idle = idle or msg["content"].get("execution_state") == "idle"
        else:
            outcome.add(msg)
    return outcome.as_dict()


class LocalKernel:
    """One kernel of the server this runs in (its ``MappingKernelManager``)."""

    def __init__(self, kernel_manager: Any, kernel_id: str, label: str = ""):
        self.kernel_manager = kernel_manager
        self.kernel_id = kernel_id
        self.label = label or kernel_id

    @classmethod
    async def find(cls, serverapp: Any, query: str) -> "LocalKernel":
        km = serverapp.kernel_manager
        sessions = await serverapp.session_manager.list_sessions()
        return cls(km, pick_kernel(query, km.list_kernels(), sessions), label=query)

    async def busy(self) -> bool:
        try:
            return self.kernel_manager.get_kernel(self.kernel_id).execution_state == "busy"
        except KeyError:
            raise ToolError(f"kernel {self.label} is not running any more") from None

    async def interrupt(self) -> None:
        result = self.kernel_manager.interrupt_kernel(self.kernel_id)
        if asyncio.iscoroutine(result):
            await result

    async def execute(self, code: str, *, silent: bool = False, outcome: Outcome | None = None) -> dict:
        try:
            kernel = self.kernel_manager.get_kernel(self.kernel_id)
        except KeyError:
            raise ToolError(f"kernel {self.label} is not running any more") from None
        client = kernel.client(session=own_session(kernel.session))
        client.start_channels()
        outcome = outcome or Outcome()
        try:
            await client.wait_for_ready(timeout=30)
            await client.execute_interactive(code, silent=silent, store_history=False, allow_stdin=False,
                                             output_hook=outcome.add, stop_on_error=True)
        finally:
            client.stop_channels()
        return outcome.as_dict()


def own_session(shared: Any) -> Any:
    """A Session of its own for one client (same key): the manager's shared one would give every client's
    shell socket the same ZMQ identity, and the kernel would send one client's replies to another."""
    from jupyter_client.session import Session

    return Session(key=shared.key, signature_scheme=shared.signature_scheme, username="nbagent-mcp")
