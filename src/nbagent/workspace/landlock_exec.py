"""The Landlock launcher: ``python -P -m nbagent.workspace.landlock_exec SPEC -- argv...``.

Restricts itself with Landlock (the kernel's own unprivileged filesystem sandbox, through the PyPI
``landlock`` binding), then executes ``argv``, which inherits the restriction and can never lift it.
Landlock grants, never subtracts: "read everything but the secret stores" is granted as every entry of
each folder on the way to a secret store except the store itself (so listing the home folder itself is
refused, reading a file in it is not). Writes are granted in the workspace, the extra writable folders,
a private temporary folder (``TMPDIR``) and ``/dev`` (``/dev/null``, terminals).

Where the kernel's Landlock has them (ABI 4+), TCP connects are refused but to the proxy's port
(nbagent.workspace.net_proxy; none at all when no host is allowed) and binds are refused; from ABI 6
signals to processes outside the sandbox and abstract Unix sockets made outside it are refused too.
The binding has no network rules or scopes yet, so that second ruleset is made here with the same
three system calls (stacked on the first: a process may hold up to 16). UDP is not confined by any
Landlock ABI so far, nor is seeing other processes.

The launcher stays the command's parent: it holds the proxy's gate open while the command runs and
removes the private temporary folder when it ends (a folder whose launcher was killed is removed by
the next launcher: its name carries the pid).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path

TMP_PREFIX = "nbagent-sandbox-"
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_RULE_NET_PORT = 2
_PR_SET_PDEATHSIG = 1
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446


def readable(hidden: list[Path], top: Path = Path("/")) -> list[Path]:
    """Paths whose subtrees together cover ``top`` except the ``hidden`` paths."""
    if any(h == top for h in hidden):
        return []
    if not any(top in h.parents for h in hidden):
        return [top]
    out: list[Path] = []
    try:
        entries = sorted(top.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.is_symlink():
            continue  # reached through its target's own rule
        out += readable(hidden, entry)
    return out


def restrict(spec: dict, private_tmp: Path) -> None:
    from landlock import FSAccess, Ruleset  # type: ignore[import-not-found]

    read = FSAccess.EXECUTE | FSAccess.READ_FILE | FSAccess.READ_DIR
    rules = Ruleset()
    hidden = [Path(p) for p in spec.get("hidden", [])]
    for path in readable(hidden):
        _allow(rules, path, read)
    writable = [private_tmp, *map(Path, spec.get("writable", []))]
    if spec.get("write_workspace", True):
        writable.append(Path(spec["workspace"]))
    for path in writable:
        _allow(rules, path, FSAccess.all())
    _allow(rules, Path("/dev"), read | FSAccess.WRITE_FILE)
    rules.apply()
    restrict_network(spec)


def restrict_network(spec: dict) -> None:
    """The second ruleset: TCP (ABI 4+) and scopes (ABI 6+), as far as this kernel has them."""
    from landlock import landlock_abi_version  # type: ignore[import-not-found]

    abi = landlock_abi_version()
    net = 0 if spec.get("network") or abi < 4 else _NET_BIND_TCP | _NET_CONNECT_TCP
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    if not net and not scoped:
        return

    class Attr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PortAttr(ctypes.Structure):
        _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]

    libc = ctypes.CDLL(None, use_errno=True)
    attr = Attr(0, net, scoped)
    size = ctypes.sizeof(Attr) if abi >= 6 else ctypes.sizeof(ctypes.c_uint64) * 2
    fd = _check(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
    try:
        port = int(spec.get("proxy", "").rpartition(":")[2] or 0)
        if net and port:
            rule = PortAttr(_NET_CONNECT_TCP, port)
            _check(libc.syscall(_SYS_ADD_RULE, fd, _RULE_NET_PORT, ctypes.byref(rule), ctypes.c_uint32(0)))
        _check(libc.syscall(_SYS_RESTRICT_SELF, fd, ctypes.c_uint32(0)))
    finally:
        os.close(fd)


def _check(result: int) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock: {os.strerror(err)}")
    return result


def _allow(rules, path: Path, access) -> None:
    try:
        if path.is_dir():
            rules.allow(str(path), rules=access)
        else:  # a file takes file rights only
            from landlock import FSAccess  # type: ignore[import-not-found]

            rules.allow(str(path), rules=access & FSAccess.all_file())
    except OSError:
        pass  # gone since it was listed, or not ours to open


def sweep(folder: Path | None = None, prefix: str = TMP_PREFIX) -> None:
    """Remove the private temporary folders (``PREFIX<pid>-...``) whose launcher is gone (killed before
    it could)."""
    for path in Path(folder or tempfile.gettempdir()).glob(f"{prefix}*"):
        pid, dash, _ = path.name[len(prefix):].partition("-")
        if path.is_symlink() or not path.is_dir() or path.stat().st_uid != os.getuid():
            continue
        if not dash:  # an older launcher's (no pid in the name, restricted when it ended): only if empty
            try:
                path.rmdir()
            except OSError:
                pass
            continue
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -P -m nbagent.workspace.landlock_exec SPEC -- COMMAND...", file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    _die_with_parent()  # as bubblewrap's --die-with-parent: nothing outlives the nbagent that started it
    sweep()
    private_tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-"))
    os.environ["TMPDIR"] = str(private_tmp)
    holder = _hold(spec.get("proxy", ""))
    try:
        status = _run(spec, private_tmp, argv[2:])
    finally:
        shutil.rmtree(private_tmp, ignore_errors=True)
        if holder is not None:
            holder.close()
    if os.WIFSIGNALED(status):  # end as the command ended, so "killed by SIGTERM" reads the same
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _pass_on(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _hold(address: str) -> socket.socket | None:
    """Keep the proxy's gate open while the command runs (nbagent.workspace.net_proxy.hold)."""
    if not address:
        return None
    host, _, port = address.rpartition(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(b"NBAGENT-HOLD\n")
    return sock


def _run(spec: dict, private_tmp: Path, command: list[str]) -> int:
    """Run the command as our child, restricted; its wait status. The launcher itself stays outside
    (removing the temporary folder takes a right in its parent folder); the signals it gets are
    passed on."""
    pid = os.fork()
    if pid == 0:
        try:
            _die_with_parent()
            restrict(spec, private_tmp)
            os.execvp(command[0], command)
        except BaseException as exc:  # never run the command unrestricted; say why, end
            print(f"nbagent sandbox: cannot run {command[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda n, _frame: _pass_on(pid, n))
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
