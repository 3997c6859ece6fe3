"""Where the kernel is: the notebook it belongs to, and the workspace the agent works on.

The notebook comes from JPY_SESSION_NAME (which Jupyter Server sets when it starts a kernel for a
notebook), else from the running servers' session lists matched by this kernel's id. Outside a
notebook (terminal IPython, a script) the place is the current directory. Sessions, history and
"continue" are per notebook, or per directory.

The workspace: ``--workspace`` or configuration when given; else the git repository holding the
notebook; else the Jupyter server's root directory, when known; else the notebook's directory.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...workspace.root import confined

if TYPE_CHECKING:
    from ...engine.open_in_jupyter import OpenContext


@dataclass
class Place:
    notebook: Path | None
    """The notebook file, when the kernel belongs to one."""
    directory: Path
    server_root: Path | None = None

    @property
    def origin(self) -> str:
        """What sessions are filed under: the notebook, else the directory."""
        return str(self.notebook or self.directory)


def find_place(shell=None, env=None, cwd: Path | None = None) -> Place:
    env = os.environ if env is None else env
    cwd = (cwd or Path.cwd()).resolve()
    kernel_id = _kernel_id(shell)
    server = _server_session(kernel_id) if kernel_id else None
    root = server[1] if server else None
    notebook = _from_env(env.get("JPY_SESSION_NAME"), cwd, root) or (server[0] if server else None)
    if notebook is None:
        return Place(None, cwd, root)
    return Place(notebook, notebook.parent, root)


def find_workspace(place: Place, override: str | Path | None = None) -> Path:
    if override:
        path = Path(override).expanduser()
        return (path if path.is_absolute() else place.directory / path).resolve()
    repo = git_root(place.directory)
    if repo is not None:
        return repo
    if place.server_root is not None and _inside(place.directory, place.server_root):
        return place.server_root
    return place.directory


def git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _from_env(value: str | None, cwd: Path, root: Path | None) -> Path | None:
    if not value or not value.endswith(".ipynb"):
        return None
    path = Path(value).expanduser()
    if path.is_absolute():
        return path.resolve()
    # A relative session path is relative to the server root; the kernel's cwd is the notebook's folder.
    for candidate in ((root / path) if root else None, cwd / path.name):
        if candidate is not None and candidate.exists():
            return candidate.resolve()
    return (cwd / path.name).resolve()


def _inside(path: Path, root: Path) -> bool:
    return confined(root.resolve(), path) is not None


def _kernel_id(shell) -> str | None:
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    try:
        from ipykernel.connect import get_connection_file

        match = re.search(r"kernel-(.+)\.json$", os.path.basename(get_connection_file()))
    except Exception:
        return None
    return match.group(1) if match else None


def _server_session(kernel_id: str) -> tuple[Path, Path] | None:
    """(notebook, server root) from the running Jupyter servers that know this kernel."""
    for info in _running_servers():
        root = Path(info.get("root_dir") or info.get("notebook_dir") or ".")
        url = info.get("url", "").rstrip("/") + "/api/sessions"
        try:
            request = urllib.request.Request(url, headers={"Authorization": f"token {info.get('token', '')}"})
            with urllib.request.urlopen(request, timeout=1.0) as response:
                sessions = json.load(response)
        except Exception:  # a stale runtime file or a server that wants a password: try the next one
            continue
        for session in sessions:
            if session.get("kernel", {}).get("id") == kernel_id and session.get("path"):
                return (root / session["path"]).resolve(), root.resolve()
    return None


def _running_servers() -> list[dict]:
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return []
    runtime = Path(jupyter_runtime_dir())
    servers = []
    for file in sorted(runtime.glob("jpserver-*.json")):
        try:
            servers.append(json.loads(file.read_text()))
        except (OSError, ValueError):
            continue
    return servers


def own_context(shell, place: Place | None, workspace) -> "OpenContext | None":
    """The notebook and cell a prompt is written in: JupyterLab sends the cell's id with each run
    (``cellId`` in the execute request's metadata), and the place knows the notebook."""
    from ...engine.open_in_jupyter import OpenContext

    header = getattr(shell, "parent_header", None) or {}
    cell_id = (header.get("metadata") or {}).get("cellId") if isinstance(header, dict) else None
    notebook = place.notebook if place is not None else None
    if notebook is None and not cell_id:
        return None
    shown = None
    if notebook is not None:
        try:
            shown = Path(notebook).resolve().relative_to(Path(workspace).resolve()).as_posix()
        except ValueError:
            shown = str(notebook)
    valid = isinstance(cell_id, str) and re.match(r"^[A-Za-z0-9_-]{1,64}$", cell_id)
    return OpenContext(notebook=shown, cell_id=cell_id if valid else None, own_cell=bool(valid))
