"""``nbagent check NOTEBOOK``: does the notebook run from top to bottom in a fresh kernel?

The same check as the notebook_check tool, ``%agent check`` and the panel's Check button
(nbagent.tools.nbcheck): a copy runs in a fresh kernel of its kernelspec; the file is not changed.
Exit status 0 when it reproduces as saved, 1 when the report found a problem, 2 when it could not run.
On a terminal, a line on stderr says which cell runs (``[3/12] cell 1a2b3c``), cleared at the end.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

from ..errors import ToolError


def add_check_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> None:
    p = subparsers.add_parser("check", parents=parents,
                              help="run a copy of a notebook in a fresh kernel: failing cells, changed outputs, "
                                   "hidden state")
    p.add_argument("notebook", help="the .ipynb file (inside the workspace)")
    p.add_argument("--timeout", type=float, help="seconds each cell may run (default 120)")
    p.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    from ..tools.nbcheck import check_path
    from ..workspace.root import Workspace

    root = Path(getattr(args, "workspace", None) or ".").expanduser().resolve()
    notebook = Path(args.notebook).expanduser()
    progress = _progress if sys.stderr.isatty() else None
    try:
        report = check_path(Workspace(root), notebook if notebook.is_absolute() else Path.cwd() / notebook,
                            args.timeout, on_cell=progress)
    except ToolError as exc:
        print(f"nbagent: {exc}", file=sys.stderr)
        return 2
    finally:
        if progress is not None:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
    print(report.text())
    return 0 if report.clean else 1


def _progress(position: int, total: int, cell_id: str) -> None:
    """One line, rewritten in place: the cell running now, of those the check runs."""
    sys.stderr.write(f"\r\x1b[Kchecking: [{position}/{total}] cell {cell_id} running…")
    sys.stderr.flush()
