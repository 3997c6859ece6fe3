"""``nbagent sandbox status|install-kernel``: what confines the code nbagent starts, and the sandboxed kernelspec."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def add_sandbox_parser(sub, parents) -> None:
    sandbox = sub.add_parser("sandbox", help="the sandbox: its status, and the sandboxed kernel", parents=parents)
    actions = sandbox.add_subparsers(dest="sandbox_command", required=True)
    status = actions.add_parser("status", help="which mechanism confines the commands nbagent starts", parents=parents)
    status.set_defaults(handler=_status)
    install = actions.add_parser("install-kernel", parents=parents,
                                 help='install the kernelspec "Python 3 (nbagent sandbox)": ipykernel under the '
                                      "sandbox's policy, without the network")
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", default=True, help="for this user (the default)")
    where.add_argument("--prefix", help="into PREFIX/share/jupyter/kernels (a virtual environment's sys.prefix)")
    install.set_defaults(handler=_install)


def _status(args: argparse.Namespace) -> int:
    from ..workspace.sandbox import current

    box = current()
    print(box.describe())
    if box.active:
        print(f"network: {_network()}")
    return 0 if box.active else 1


def _network() -> str:
    """What sandboxed code may reach, from the user's own settings (the environment)."""
    from ..config import AgentConfig
    from ..errors import ConfigError

    try:
        config = AgentConfig.load()
    except ConfigError as exc:
        return f"unknown: {exc}"
    if config.sandbox_network:
        return "all of it (NBAGENT_SANDBOX_NETWORK)"
    hosts = config.sandbox_hosts
    return (f"only {', '.join(hosts)}, through nbagent's proxy (NBAGENT_SANDBOX_HOSTS)" if hosts
            else "none (allow hosts with NBAGENT_SANDBOX_HOSTS)")


def _install(args: argparse.Namespace) -> int:
    from jupyter_client.kernelspec import KernelSpecManager

    from ..workspace.sandbox import current
    from ..workspace.sandbox_kernel import DISPLAY_NAME, KERNEL_NAME, kernel_json

    box = current()
    if not box.active:
        print(f"nbagent: {box.describe()}: a sandboxed kernel would not be confined; not installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "kernel.json").write_text(json.dumps(kernel_json(), indent=1), encoding="utf-8")
        where = KernelSpecManager().install_kernel_spec(tmp, KERNEL_NAME, user=args.prefix is None,
                                                        prefix=args.prefix)
    print(f'installed "{DISPLAY_NAME}" ({KERNEL_NAME}) in {where}; sandbox: {box.describe()}')
    return 0
