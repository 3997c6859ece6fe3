"""The batch progress bar in a notebook: an ipywidgets bar with a count of done and failed tasks."""

from __future__ import annotations

import sys
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from ...batching.progress import Progress, register_progress


class WidgetProgress(Progress):
    def __init__(self, total: int):
        super().__init__(total)
        self.bar = widgets.IntProgress(value=0, min=0, max=max(total, 1), description="batch")
        self.label = widgets.Label(value=f"0 / {total}")
        self.box = widgets.HBox([self.bar, self.label])
        display(self.box)

    def draw(self, row: dict[str, Any]) -> None:
        self.bar.value = self.done
        failed = f", {self.failed} failed" if self.failed else ""
        self.label.value = f"{self.done} / {self.total}{failed}"
        if self.failed:
            self.bar.bar_style = "warning"

    def close(self) -> None:
        self.bar.bar_style = "danger" if self.failed == self.total and self.total else (
            "warning" if self.failed else "success")


def _in_a_kernel(total: int) -> Progress | None:
    return WidgetProgress(total) if "ipykernel" in sys.modules else None


register_progress(_in_a_kernel)  # nbagent.batch draws this bar inside a Jupyter kernel
