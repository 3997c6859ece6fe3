"""Run inside a kernel by the served kernel tools: kernel_variables and kernel_inspect, answered in one line.

Inline completions ask it too (action "names": the kernel's names, types, columns and imports).

An outside agent's kernel_variables and kernel_inspect (nbagent.jupyter.remote.kernel_tools) reach a
kernel only through the Jupyter protocol, so they send it one fixed, silent line that imports this
module and calls ``probe``: the namespace is then read by the engine's own code (no evaluation, the
same limits), and the answer comes back as one marked JSON line on stdout. The variable name
arrives as a JSON string literal, never as code.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

MARK = "\x1enbagent-probe:"
"""Starts the answer's line (a record separator first: no user print looks like it)."""


def probe(shell: Any, action: str, name: str = "") -> None:
    from ...errors import ToolError
    from ...tools import kernel as tools
    from .bridge import bridge_from_shell

    ctx = SimpleNamespace(kernel=bridge_from_shell(shell, allow_run=False))
    try:
        if action == "names":  # an inline completion's context (nbagent.complete.names)
            from ...complete.names import kernel_names

            answer: dict = {"names": kernel_names(ctx.kernel)}
        else:
            text = tools.kernel_variables(ctx) if action == "variables" else tools.kernel_inspect(ctx, name)
            answer = {"text": text}
    except ToolError as exc:
        answer = {"error": str(exc)}
    print(MARK + json.dumps(answer), flush=True)


def probe_code(action: str, name: str = "") -> str:
    """The one line sent to the kernel (``name`` as a JSON literal, so it is data, not code)."""
    from .loader import import_line

    return import_line("nbagent.jupyter.kernel.probe", f"probe(get_ipython(), {json.dumps(action)}, {json.dumps(name)})")


def answer_of(stdout: str) -> dict | None:
    """The probe's answer in a run's stdout, or None when there is none."""
    for line in reversed(stdout.split("\n")):  # not splitlines(): it splits at the record separator too
        if line.startswith(MARK):
            try:
                answer = json.loads(line[len(MARK):])
            except ValueError:
                return None
            return answer if isinstance(answer, dict) else None
    return None
