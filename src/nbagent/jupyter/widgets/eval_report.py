"""The eval report in a notebook: nbagent.eval's report shown in the cell that ran it, plots included."""

from __future__ import annotations

from typing import Any

from IPython import get_ipython
from IPython.display import display

from ...evals.report import register_display


def show_in_cell(report: Any) -> None:
    if get_ipython() is not None:  # ipykernel imported but no shell running (a script, a test run): nothing to show in
        display(report)


register_display(show_in_cell)  # nbagent.eval shows its report through this inside a Jupyter kernel
