"""The secret that lets a kernel's agent reach this server's notebook store, and its handler.

At start the extension writes a 0600 file into Jupyter's runtime directory holding the server's URL
and a random secret, and puts the file's PATH (not the secret) into the environment, which every
kernel the server starts inherits. ``%agent`` in such a kernel reads the file and sends the secret
in a header; the handler compares it with ``hmac.compare_digest`` and answers 403 otherwise. The
handler reads no cookies, so a browser cannot be tricked into using it (no XSRF to check).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_runtime_dir, secure_write
from jupyter_server.auth.decorator import allow_unauthenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from ...errors import ToolError
from ...render.redaction import forget_secret, register_secret
from ..kernel.server_client import ENV_VAR, SECRET_HEADER



KERNEL_ACTIONS = ("kernel_action", "kernel_ids", "kernel_replay")
"""The requests that name a kernel, not a notebook (server_client.ServerNotebookStore's undo transport)."""


class KernelLink:
    """The runtime file and the secret of one running server extension."""

    def __init__(self, url: str, root: Path):
        self.secret = secrets.token_urlsafe(32)
        register_secret(self.secret)  # this process's tools (the server's agents) never show it either
        self.path = Path(jupyter_runtime_dir()) / f"nbagent-server-{os.getpid()}.json"
        self.root = root
        self.write(url)
        self._previous = os.environ.get(ENV_VAR)
        os.environ[ENV_VAR] = str(self.path)

    def write(self, url: str) -> None:
        """(Re)write the file: again once the server listens, as the port may differ from the configured one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with secure_write(str(self.path)) as f:  # created 0600 before anything is written
            json.dump({"url": url, "secret": self.secret, "root": str(self.root), "pid": os.getpid()}, f)

    def allows(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self.secret.encode())

    def close(self) -> None:
        self.path.unlink(missing_ok=True)
        forget_secret(self.secret)
        if os.environ.get(ENV_VAR) == str(self.path):
            if self._previous is None:
                os.environ.pop(ENV_VAR, None)
            else:
                os.environ[ENV_VAR] = self._previous


class KernelNotebooksHandler(ExtensionHandlerMixin, JupyterHandler):
    """POST /nbagent/api/kernel/notebooks: read, apply, save or run for an agent inside a kernel."""

    def check_xsrf_cookie(self) -> None:
        """The secret header is the credential; no cookie is used, so there is no request to forge."""

    @allow_unauthenticated
    async def post(self) -> None:
        app: Any = self.extensionapp  # the NbAgentServer (typed as a plain ExtensionApp)
        if not app.kernel_link.allows(self.request.headers.get(SECRET_HEADER)):
            raise web.HTTPError(403, "a kernel of this server must send its secret")
        raw = self._json()
        if isinstance(raw, dict) and raw.get("action") == "local_model":
            return self._reply(await _local_model())
        if isinstance(raw, dict) and raw.get("action") in KERNEL_ACTIONS:
            return await self._kernel(app.notebooks, raw)
        body = self._body()
        notebooks = app.notebooks
        path = Path(body["path"])
        name = body.get("name") or path.name
        try:
            rel = notebooks.relative(path)
            if rel is None:
                return self._reply({"outside": True})
            action = body.get("action")
            if action == "read":
                snap = await notebooks.aread(rel, path, name, allow_missing=bool(body.get("allow_missing")))
                return self._reply({"snapshot": snap.to_dict()})
            if action == "apply":
                ops = body.get("ops")
                if not isinstance(ops, list):
                    raise web.HTTPError(400, "ops must be a list")
                snap = await notebooks.aapply(rel, path, name, ops, allow_missing=bool(body.get("allow_missing")))
                return self._reply({"snapshot": snap.to_dict()})
            if action == "save":
                snap = await notebooks.asave(rel)
                return self._reply({"snapshot": None if snap is None else snap.to_dict()})
            if action == "run":
                watch = body.get("watch") if isinstance(body.get("watch"), dict) else None
                result = await notebooks.arun(rel, name, list(body.get("cell_ids") or []),
                                              caller_kernel=body.get("kernel_id"), watch=watch)
                return self._reply({"result": result})
            if action == "check_run":  # before the approval card: would a run be refused?
                return self._reply({"kernel_id": notebooks.runnable_kernel(rel, name, body.get("kernel_id"))})
            raise web.HTTPError(400, "action must be read, apply, save, run or check_run")
        except ToolError as exc:
            self._reply({"error": str(exc)}, 409)

    async def _kernel(self, notebooks: Any, raw: dict[str, Any]) -> None:
        """The undo record of an agent outside the kernels (remote_ledger): a watcher line, the kernels, a
        replay; only in this server's own kernels."""
        action = raw["action"]
        if action == "kernel_ids":
            return self._reply({"kernel_ids": notebooks.kernel_ids()})
        kernel_id = raw.get("kernel_id")
        if not isinstance(kernel_id, str) or kernel_id not in notebooks.kernel_ids():
            raise web.HTTPError(400, "kernel_id must name a running kernel of this server")
        try:
            if action == "kernel_action":
                args = raw.get("args") if isinstance(raw.get("args"), dict) else {}
                result = await notebooks.akernel_action(kernel_id, str(raw.get("kernel_action")), args)
            else:
                cells = raw.get("cells") if isinstance(raw.get("cells"), list) else []
                result = await notebooks.akernel_replay(kernel_id, cells, str(raw.get("owner") or ""))
        except ToolError as exc:
            return self._reply({"error": str(exc)}, 409)
        self._reply({"result": result})

    def _json(self) -> Any:
        try:
            return json.loads(self.request.body or b"{}")
        except ValueError as exc:
            raise web.HTTPError(400, f"the body is not JSON: {exc}") from exc

    def _body(self) -> dict[str, Any]:
        body = self._json()
        if not isinstance(body, dict) or not isinstance(body.get("path"), str):
            raise web.HTTPError(400, 'give {"action": ..., "path": "<absolute notebook path>", ...}')
        return body

    def _reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data, default=str))



async def _local_model() -> dict[str, Any]:
    """A kernel of this server wants the offline model: this server's (started now if it is not running),
    so that the machine loads it once; ``{"base_url": None, "error": ...}`` when it cannot run here."""
    import asyncio

    from ...model import local

    if not local.local_available():
        return {"base_url": None, "error": "the offline model is not installed for this server"}
    try:
        server = await asyncio.to_thread(local.shared_server, borrow=False)
    except Exception as exc:  # noqa: BLE001 - the kernel then starts its own
        return {"base_url": None, "error": str(exc)}
    return {"base_url": server.base_url}
