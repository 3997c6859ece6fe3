"""The check of a DABStep task: the notebook re-runs clean, and what it prints last is the answer.

``python -P -m nbagent.evals.public.dabstep_check NOTEBOOK EXPECTED RESULT`` in the finished
workspace: the notebook runs in a fresh kernel as ``notebook_check`` runs it (a failing cell, an
output that differs from the saved one or a name no cell defines fails the task), then the last line
its last printing cell wrote is scored against EXPECTED with DABStep's rule.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .dabstep_score import question_scorer


def printed_answer(nb: Any) -> str:
    """The last non-empty line of output of the last code cell that showed any."""
    from ..checks import outputs

    for cell in reversed([c for c in nb.cells if c.cell_type == "code"]):
        lines = [line.strip() for line in outputs(cell).splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return ""


def check(notebook: Path, expected: str) -> dict[str, Any]:
    from ...tools.nbcheck import check_notebook

    if not notebook.is_file():
        return {"passed": False, "reason": f"no {notebook.name}: the task asks for that notebook"}
    report = check_notebook(json.loads(notebook.read_text(encoding="utf-8")), notebook.name, notebook.parent.resolve())
    if not report.clean:
        problems = report.text().splitlines()[1:3]
        return {"passed": False, "reason": f"the notebook does not re-run clean: {' '.join(problems)}"[:500]}
    answer = printed_answer(report.executed)
    if question_scorer(answer, expected):
        return {"passed": True, "reason": ""}
    return {"passed": False, "reason": f"printed {answer[:200]!r}, which DABStep's scorer does not accept "
                                       f"for the expected answer"}


def main(argv: list[str] | None = None) -> int:
    notebook, expected, out = (argv if argv is not None else sys.argv[1:])[:3]
    from ...workspace.lean_imports import without_iri_format_check

    without_iri_format_check()  # as nbagent.evals.runner
    try:
        result = check(Path(notebook), expected)
    except Exception as exc:  # noqa: BLE001 - a check that cannot run fails, saying why
        result = {"passed": False, "reason": f"{type(exc).__name__}: {exc}"[:500]}
    Path(out).write_text(json.dumps(result), encoding="utf-8")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
