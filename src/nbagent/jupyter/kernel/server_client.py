"""The kernel's way to the Jupyter server that started it: notebook reads, edits and runs go there.

A kernel started by a server running nbagent's extension inherits NBAGENT_SERVER_INFO, the path of
a 0600 file holding the server's URL and a secret (nbagent.jupyter.server.kernel_secret). While that
file exists, the kernel's agent sends its notebook reads, edits and runs to the server, which is
the one writer of notebooks: the live document when the notebook is open, else the file. Without
it (terminal IPython, nbconvert, a server without the extension) the tools use the file directly.
The secret is registered for redaction, so no tool result can show it.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Mapping

from ...errors import ToolError
from ...model import local
from ...render.redaction import register_secret
from ...tools import nbdoc
from ...tools.nbdoc import Snapshot
from ...workspace.root import confine
from ...workspace.safe_read import read_text

ENV_VAR = "NBAGENT_SERVER_INFO"
"""Environment variable holding the runtime file's path (written by nbagent.jupyter.server.kernel_secret)."""
SECRET_HEADER = "X-Nbagent-Kernel-Secret"
"""The header the secret travels in (the one definition; the server's handler reads it from here)."""
TIMEOUT = 30.0
RUN_TIMEOUT = 600.0
LOCAL_MODEL_TIMEOUT = 150.0
"""The server may have to start its offline model first (LocalServer's own start-up limit is 120 s)."""


class ServerNotebookStore:
    """A notebook store that forwards to the server; ``None`` (use the file) when it is gone."""

    def __init__(self, url: str, secret: str, kernel_id: str | None):
        self.url = url.rstrip("/") + "/nbagent/api/kernel/notebooks"
        self.secret = secret
        self.kernel_id = kernel_id

    def read(self, path: Path, name: str, *, allow_missing: bool = False) -> Snapshot | None:
        reply = self._post({"action": "read", "path": str(path), "name": name, "allow_missing": allow_missing})
        return None if reply is None else Snapshot.from_dict(reply["snapshot"])

    def apply(self, path: Path, name: str, ops: list[dict], *, allow_missing: bool = False) -> Snapshot | None:
        reply = self._post({"action": "apply", "path": str(path), "name": name, "ops": ops,
                            "allow_missing": allow_missing})
        return None if reply is None else Snapshot.from_dict(reply["snapshot"])

    def save(self, path: Path, name: str) -> Snapshot | None:
        """Have the server save the notebook where a tab holds it open; None when none does."""
        reply = self._post({"action": "save", "path": str(path), "name": name})
        snapshot = None if reply is None else reply.get("snapshot")
        return None if snapshot is None else Snapshot.from_dict(snapshot)

    def run(self, path: Path, name: str, cell_ids: list[str], *, watch: dict | None = None) -> dict | None:
        """``watch``: given by an agent outside any kernel (``nbagent acp`` started by the server), whose
        record of the run's change to the kernel's variables the kernel keeps (remote_ledger)."""
        reply = self._post({"action": "run", "path": str(path), "name": name, "cell_ids": cell_ids,
                            "kernel_id": self.kernel_id, "watch": watch}, timeout=RUN_TIMEOUT)
        return None if reply is None else reply["result"]

    # nbagent.checkpoints.remote_ledger's transport, for an agent outside the server's kernels
    def kernel_action(self, kernel_id: str, action: str, args: dict) -> dict | None:
        reply = self._post({"action": "kernel_action", "kernel_id": kernel_id, "kernel_action": action,
                            "args": args})
        return None if reply is None else reply.get("result")

    def kernel_ids(self) -> list[str]:
        reply = self._post({"action": "kernel_ids"})
        return [] if reply is None else list(reply.get("kernel_ids") or [])

    def kernel_replay(self, kernel_id: str, cells: list[dict], owner: str) -> dict | None:
        reply = self._post({"action": "kernel_replay", "kernel_id": kernel_id, "cells": cells, "owner": owner},
                           timeout=RUN_TIMEOUT)
        return None if reply is None else reply.get("result")

    def check_run(self, path: Path, name: str) -> bool | None:
        """Raise the server's refusal of a run (this kernel's own notebook, no kernel) before anyone is
        asked to approve it; True when it would run, None when the server does not hold the notebook."""
        reply = self._post({"action": "check_run", "path": str(path), "name": name, "kernel_id": self.kernel_id})
        return None if reply is None else True

    def local_model(self) -> str | None:
        """The base URL of the server's offline model (it starts it if needed), or None: the kernel then
        starts its own. Registered as the offline model's lender, so one machine loads it once."""
        reply = self._post({"action": "local_model"}, timeout=LOCAL_MODEL_TIMEOUT)
        url = None if reply is None else reply.get("base_url")
        return url if isinstance(url, str) and url.startswith("http://127.0.0.1:") else None

    def _post(self, body: dict, timeout: float = TIMEOUT) -> dict | None:
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", SECRET_HEADER: self.secret})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            reply = _error_body(exc)
            if exc.code == 409 and "error" in reply:
                raise ToolError(reply["error"]) from None
            raise ToolError(f"the Jupyter server refused the notebook request ({exc.code}: "
                            f"{reply.get('message') or reply.get('error') or exc.reason})") from None
        except (urllib.error.URLError, ConnectionError):
            return None  # the server is gone (the kernel outlived it): the file is all there is
        return None if reply.get("outside") else reply


def _error_body(exc: urllib.error.HTTPError) -> dict:
    try:
        data = json.loads(exc.read() or b"{}")
        return data if isinstance(data, dict) else {}
    except ValueError:
        return {}


_LOCK = threading.Lock()
_CONNECTED: list[ServerNotebookStore] = []


def connect(env: Mapping[str, str] | None = None) -> ServerNotebookStore | None:
    """Register the server's store for this process once, if this kernel was started by such a server."""
    source: Mapping[str, str] = os.environ if env is None else env
    with _LOCK:
        if _CONNECTED:
            return _CONNECTED[0]
        info = _read_info(source.get(ENV_VAR))
        if info is None:
            return None
        register_secret(info["secret"])
        store = ServerNotebookStore(info["url"], info["secret"], _own_kernel_id())
        nbdoc.register_store(store)
        local.register_lender(store.local_model)  # the server's offline model, not a second copy
        _CONNECTED.append(store)
        return store


def find_server(workspace: Path, env: Mapping[str, str] | None = None) -> ServerNotebookStore | None:
    """The notebook store of a running Jupyter server with nbagent's extension whose root holds
    ``workspace``, for a process that server did not start (``nbagent undo`` in a terminal); None
    when there is none, and the caller uses the files.

    A terminal opened in JupyterLab inherits NBAGENT_SERVER_INFO; elsewhere the runtime files that
    running extensions write (0600, in Jupyter's runtime directory) are read, newest first, and a
    file whose server process is gone is skipped. Nothing is registered for the process.
    """
    source: Mapping[str, str] = os.environ if env is None else env
    candidates = [source[ENV_VAR]] if source.get(ENV_VAR) else []
    candidates += [str(p) for p in _runtime_files()]
    workspace = Path(os.path.realpath(workspace))
    for candidate in candidates:
        info = _read_info(candidate)
        if info is None or not _serves(info, workspace):
            continue
        register_secret(info["secret"])
        return ServerNotebookStore(info["url"], info["secret"], kernel_id=None)
    return None


def _runtime_files() -> list[Path]:
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:  # no Jupyter installed: no server to find
        return []
    found = []
    for path in Path(jupyter_runtime_dir()).glob("nbagent-server-*.json"):
        try:
            st = path.stat()
        except OSError:
            continue
        if st.st_uid == os.getuid() and not st.st_mode & 0o077:  # ours, and written by secure_write
            found.append((st.st_mtime, path))
    return [path for _, path in sorted(found, reverse=True)]


def _serves(info: dict[str, Any], workspace: Path) -> bool:
    """The server still runs and ``workspace`` is inside its root (a server of another project is not asked)."""
    root, pid = info.get("root"), info.get("pid")
    if not isinstance(root, str) or not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False  # a server killed before it could remove its file
    except PermissionError:
        pass  # alive, run by someone else: the owner check on the file already passed
    try:  # the one confinement: the workspace, links followed, must lie inside the server's root
        confine(Path(os.path.realpath(root)), workspace)
    except ToolError:
        return False
    return True


def link_info(env: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The runtime file of the server that started this process (url, secret, root, pid), or None."""
    return _read_info((os.environ if env is None else env).get(ENV_VAR))


def server_info(pid: Any) -> dict[str, Any] | None:
    """The running Jupyter server's own info (url, token), written by jupyter_server for the process
    ``pid`` (the one in the link file); None when there is none or Jupyter is not installed."""
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:
        return None
    for server in list_running_servers():
        if server.get("pid") == pid and isinstance(server.get("url"), str):
            return server
    return None


def disconnect() -> None:
    with _LOCK:
        for store in _CONNECTED:
            nbdoc.unregister_store(store)
            local.unregister_lender(store.local_model)
        _CONNECTED.clear()


def _read_info(path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    try:
        info = json.loads(read_text(path, max_bytes=1 << 16))  # never a FIFO
    except (OSError, ValueError):
        return None  # the server stopped and removed it, or it is not ours
    ok = isinstance(info, dict) and isinstance(info.get("url"), str) and isinstance(info.get("secret"), str)
    return info if ok and len(info["secret"]) >= 16 else None


def _own_kernel_id() -> str | None:
    """This kernel's id (its connection file is kernel-<id>.json), so the server never runs cells here."""
    try:
        from ipykernel.connect import get_connection_file

        stem = Path(get_connection_file()).stem
    except Exception:  # not in an ipykernel (terminal IPython): no kernel to protect
        return None
    return stem[len("kernel-"):] if stem.startswith("kernel-") else None
