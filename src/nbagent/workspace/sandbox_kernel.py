"""The sandboxed kernel: ``python -m nbagent.workspace.sandbox_kernel -f CONNECTION_FILE``.

The kernelspec "Python 3 (nbagent sandbox)" (``nbagent sandbox install-kernel``) starts ipykernel through
this launcher, under the sandbox's filesystem policy: the kernel writes only in its working directory
(the notebook's folder, taken as the workspace) and a private /tmp, reads no secret stores, sees a
scrubbed environment and no other process. What it can still reach: the network (a live kernel talks to
Jupyter over TCP, so its network namespace is the host's), everything readable outside the secret
stores, and the memory of what runs in it. Where no sandbox works it refuses to start rather than run
a "sandbox" kernel unconfined.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import sandbox as sb

KERNEL_NAME = "nbagent-sandbox"
DISPLAY_NAME = "Python 3 (nbagent sandbox)"


def kernel_json() -> dict:
    """The kernelspec: this launcher with this Python; interrupts by message (a signal would reach bwrap)."""
    return {"argv": [sys.executable, "-m", "nbagent.workspace.sandbox_kernel", "-f", "{connection_file}"],
            "display_name": DISPLAY_NAME, "language": "python", "interrupt_mode": "message",
            "metadata": {"nbagent": {"sandbox": True}}}


def kernel_argv(connection_file: str, workspace: Path) -> tuple[list[str], dict[str, str]]:
    """The confined ipykernel command and its environment."""
    box = sb.current()
    if not box.active:
        raise SystemExit(f"nbagent sandbox kernel: {box.describe()}; refusing to start a sandbox kernel unconfined")
    connection = Path(connection_file).resolve()
    policy = sb.Policy(workspace.resolve(), network=True, readonly=(connection,))
    # not told its parent's pid: in its own pid namespace its parent is pid 1, which ipykernel takes for
    # "my parent died"; the sandbox dies with this launcher anyway
    argv = ["env", "-u", "JPY_PARENT_PID", sys.executable, "-m", "ipykernel_launcher", "-f", str(connection)]
    env = box.environment(policy, {"IPYTHONDIR": "/tmp/ipython" if box.mechanism == "bubblewrap" else ""})
    if not env["IPYTHONDIR"]:
        env.pop("IPYTHONDIR")
    return box.command(argv, policy, workspace), env


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "-f":
        print("usage: python -m nbagent.workspace.sandbox_kernel -f CONNECTION_FILE", file=sys.stderr)
        return 2
    command, env = kernel_argv(argv[1], Path.cwd())
    os.execvpe(command[0], command, env)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
