"""``nbagent acp``: serve an Agent Client Protocol client (Zed, marimo, Jupyter AI) on stdin and stdout.

Each session's workspace is the directory the client names; the model comes from nbagent's own
configuration (environment and config files), as for ``nbagent run``. See docs/acp.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence


def add_acp_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> None:
    p = subparsers.add_parser("acp", parents=parents,
                              help="run as an Agent Client Protocol agent on stdio (for Zed, marimo, Jupyter AI)")
    p.set_defaults(handler=lambda args: run_acp())


def run_acp() -> int:
    import importlib.util

    if importlib.util.find_spec("acp") is None:  # the SDK, from the extra (found, not imported: that is slow)
        print('nbagent: nbagent acp needs the Agent Client Protocol SDK: pip install "jupyter-nbagent[acp]"',
              file=sys.stderr)
        return 2

    from ..acp import main

    return main()
