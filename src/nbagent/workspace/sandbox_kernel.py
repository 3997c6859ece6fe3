"""The sandboxed kernel: ``python -m nbagent.workspace.sandbox_kernel -f CONNECTION_FILE``.

The kernelspec "Python 3 (nbagent sandbox)" (``nbagent sandbox install-kernel``) starts ipykernel through
this launcher, under the sandbox's policy: the kernel writes only in its working directory (the
notebook's folder, taken as the workspace) and a private /tmp, reads no secret stores, sees a scrubbed
environment and no other process, and has **no network**: under bubblewrap a network namespace of its
own, under Landlock (ABI 4+) no TCP connect or bind.

Jupyter talks to a kernel over TCP on the ports of the connection file it wrote. So the kernel is given
a private connection file of its own with ZeroMQ's ``ipc`` transport (Unix sockets ``<dir>/kernel-PORT``
in a folder bound into the sandbox), and this launcher stays outside, listening on the server's TCP
ports on 127.0.0.1 and relaying every connection's bytes to the kernel's socket of the same port:
ZeroMQ speaks the same ZMTP over both transports, so neither side knows. The server's kernel manager
needs no configuration. Hosts the user allows (``NBAGENT_SANDBOX_HOSTS`` in the server's environment)
are reachable through the proxy (nbagent.workspace.net_proxy), as for commands.

What the kernel can still reach: everything readable outside the secret stores, the memory of what
runs in it, and (under Landlock) UDP. Where no sandbox works it refuses to start rather than run a
"sandbox" kernel unconfined.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from . import sandbox as sb
from .landlock_exec import sweep
from .net_proxy import Gate, pipe, proxy

KERNEL_NAME = "nbagent-sandbox"
DISPLAY_NAME = "Python 3 (nbagent sandbox)"
TMP_PREFIX = "nbagent-kernel-"
CHANNELS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


def kernel_json() -> dict:
    """The kernelspec: this launcher with this Python; interrupts by message (a signal would reach bwrap)."""
    return {"argv": [sys.executable, "-m", "nbagent.workspace.sandbox_kernel", "-f", "{connection_file}"],
            "display_name": DISPLAY_NAME, "language": "python", "interrupt_mode": "message",
            "metadata": {"nbagent": {"sandbox": True}}}


def ipc_connection(info: dict, folder: Path) -> dict:
    """The kernel's own connection file: the same ports and key, over Unix sockets in ``folder``."""
    return {**info, "transport": "ipc", "ip": str(folder / "kernel")}


def kernel_argv(connection_file: str, workspace: Path, folder: Path,
                hosts: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str], sb.Policy]:
    """The confined ipykernel command, its environment and policy, for the private connection file in
    ``folder`` (written by the caller)."""
    box = sb.current()
    if not box.active:
        raise SystemExit(f"nbagent sandbox kernel: {box.describe()}; refusing to start a sandbox kernel unconfined")
    policy = sb.Policy(workspace.resolve(), writable=(folder,))
    if hosts:
        policy = dataclasses.replace(policy, gate=proxy().open(Gate(hosts, command="the sandboxed kernel"),
                                                              unix=box.mechanism == "bubblewrap"))
    # not told its parent's pid: in its own pid namespace its parent is pid 1, which ipykernel takes for
    # "my parent died"; the sandbox dies with this launcher anyway
    argv = ["env", "-u", "JPY_PARENT_PID", sys.executable, "-m", "ipykernel_launcher", "-f", connection_file]
    env = box.environment(policy, {"IPYTHONDIR": str(folder / "ipython")})
    return box.command(argv, policy, workspace), env, policy


async def relay(info: dict, folder: Path) -> list[asyncio.AbstractServer]:
    """Listen on the connection file's TCP ports and relay each connection to the kernel's Unix socket."""
    servers = []
    for channel in CHANNELS:
        port = int(info[channel])
        path = str(folder / f"kernel-{port}")

        async def serve(reader, writer, path=path) -> None:
            try:
                up_reader, up_writer = await asyncio.open_unix_connection(path)
            except OSError:  # the kernel has not bound it yet: ZeroMQ connects again on its own
                writer.close()
                return
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        servers.append(await asyncio.start_server(serve, info.get("ip") or "127.0.0.1", port))
    return servers


async def run(connection_file: str, workspace: Path) -> int:
    info = json.loads(Path(connection_file).read_text())
    if info.get("transport", "tcp") != "tcp":
        raise SystemExit("nbagent sandbox kernel: the server's transport is not tcp; start it with tcp")
    hosts = tuple(h.strip() for h in os.environ.get("NBAGENT_SANDBOX_HOSTS", "").split(",") if h.strip())
    sweep(prefix=TMP_PREFIX)  # the folders of sandbox kernels killed (shut down "now") before they could
    with tempfile.TemporaryDirectory(prefix=f"{TMP_PREFIX}{os.getpid()}-") as tmp:
        folder = Path(tmp)
        private = folder / "kernel.json"
        private.write_text(json.dumps(ipc_connection(info, folder)))
        private.chmod(0o600)
        servers = await relay(info, folder)
        command, env, _ = kernel_argv(str(private), workspace, folder, hosts)
        kernel = subprocess.Popen(command, env=env, cwd=str(workspace))
        try:
            return await asyncio.to_thread(kernel.wait)
        finally:
            for server in servers:
                server.close()
            if kernel.poll() is None:
                kernel.kill()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "-f":
        print("usage: python -m nbagent.workspace.sandbox_kernel -f CONNECTION_FILE", file=sys.stderr)
        return 2
    return asyncio.run(run(argv[1], Path.cwd()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
