"""Is there a widget frontend to draw on? Terminal IPython and nbconvert get plain text instead.

A kernel has no direct way to know what renders its output, so the guess uses what the notebook
frontends leave behind: Jupyter Server (JupyterLab, Notebook 7, and VS Code through a server) sets
JPY_SESSION_NAME when it starts a kernel for a notebook; VS Code's own kernels define
``__vsc_ipynb_file__``; a widget manager that restores state opens the "jupyter.widget.control"
comm. nbconvert and nbval start kernels directly and do none of these; a terminal shell has no
kernel. ``NBAGENT_VIEW`` (or ``c.NbAgent.view``) = widgets | text overrides the guess.
"""

from __future__ import annotations

import os

VIEW_MODES = ("auto", "widgets", "text")


def use_widgets(mode: str | None = None, shell=None, env=None) -> bool:
    env = os.environ if env is None else env
    mode = (mode or env.get("NBAGENT_VIEW") or "auto").strip().lower()
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
    return bool(env.get("JPY_SESSION_NAME") or "__vsc_ipynb_file__" in getattr(shell, "user_ns", {})
                or Widget._control_comm is not None)
