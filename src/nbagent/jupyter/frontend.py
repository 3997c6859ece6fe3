"""Is there a widget frontend to draw on? Terminal IPython and nbconvert get plain text instead.

A notebook frontend that renders ipywidgets (JupyterLab, Notebook 7, VS Code) opens the
"jupyter.widget.control" comm when it connects to the kernel; nbconvert and nbval never do, and a
terminal shell has no kernel at all. ``NBAGENT_VIEW`` (or ``c.NbAgent.view``) = widgets | text
overrides the guess.
"""

from __future__ import annotations

import os

VIEW_MODES = ("auto", "widgets", "text")


def use_widgets(mode: str | None = None, shell=None) -> bool:
    mode = (mode or os.environ.get("NBAGENT_VIEW") or "auto").strip().lower()
    if mode not in VIEW_MODES:
        raise ValueError(f"view must be one of {', '.join(VIEW_MODES)}, not {mode!r}")
    if mode != "auto":
        return mode == "widgets"
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    try:
        from ipywidgets import Widget
    except ImportError:
        return False
    return Widget._control_comm is not None
