"""Running a task's check.py in a fresh process in the finished workspace: passed or not, and why in one line.

``run_check`` starts ``python -m nbagent.evals.runner CHECK RESULT`` with the workspace as its working
directory; the child runs the check's module-level code, then its ``test_*`` functions in order, and
stops at the first failure, whose reason is the assert's message (or its source line when it has
none). A suite is code you run: the check runs in the sandbox (nbagent.workspace.sandbox: it may
write only in its throw-away copy and its result folder, reads no secret stores, has no network) and
always with a scrubbed environment (no keys or tokens), sandbox or not. Written here rather than run by pytest: a check must not pick up the user's pytest plugins,
conftest files or configuration, nor write a cache into the workspace, and the result it gives is
one line, not a report to parse.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from ..tools.confinement import confinement_at
from ..workspace.lean_imports import without_iri_format_check
from ..workspace.procs import ProcessRef, kill_tree
from ..workspace.sandbox import scrub_environment
from .checks import ANSWER_ENV, TASK_ENV

CHECK_TIME_LIMIT = 300.0
"""Seconds a check may take (executing notebooks included) before it counts as failed."""


def run_check(task_folder: Path, workspace: Path, answer: str = "", *,
              time_limit: float = CHECK_TIME_LIMIT, module: tuple[str, ...] = (),
              reads: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Run the task's check on ``workspace``: ``{"passed", "check_reason", "check_seconds"}``, and
    ``check_parts`` when the check judged parts (a benchmark's questions). ``module`` is another
    checker to run the same way (``("nbagent.evals.public.dseval_check", ARGS...)``: the result file's
    path is its last argument); ``reads``: folders it reads besides the two (a benchmark's question
    file), kept visible in the sandbox, whose /tmp is new."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nbagent-check-") as tmp:
        answer_file, result_file = Path(tmp) / "answer.md", Path(tmp) / "result.json"
        answer_file.write_text(answer or "", encoding="utf-8")
        confine = confinement_at(workspace, writable=(Path(tmp),), readable=(Path(task_folder).resolve(),
                                                                                    *(Path(r).resolve() for r in reads)))
        env = scrub_environment(os.environ) if confine is None else confine[0].environment(confine[1])
        env.update({TASK_ENV: str(task_folder), ANSWER_ENV: str(answer_file), "PYTHONDONTWRITEBYTECODE": "1"})
        env.pop("MPLBACKEND", None)  # a notebook's kernel draws inline, as in Jupyter, whatever this shell says
        # -P: the workspace is not put first on sys.path, so a file the agent wrote (nbagent/, json.py)
        # cannot stand in for the check's own imports; main() appends it last, for the workspace's modules.
        checker = module or ("nbagent.evals.runner", str(task_folder / "check.py"))
        argv = [sys.executable, "-P", "-m", *checker, str(result_file)]
        if confine is not None:
            argv = confine[0].command(argv, confine[1], workspace)
        proc = subprocess.Popen(argv, cwd=workspace, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        ref = ProcessRef.of(proc.pid)
        try:
            output, _ = proc.communicate(timeout=time_limit)
        except subprocess.TimeoutExpired:
            kill_tree(ref)  # the kernels it started go with it
            proc.communicate()
            return _result(False, f"the check took longer than {time_limit:.0f} s", started)
        kill_tree(ref)  # a kernel a check left running
        try:
            result = json.loads(result_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = output.decode("utf-8", "replace").strip().splitlines()[-3:]
            return _result(False, f"the check ended without a result (exit {proc.returncode}): "
                                  f"{' | '.join(tail)[:300]}", started)
    return _result(bool(result.get("passed")), str(result.get("reason", "")), started, result.get("parts"))


def _result(passed: bool, reason: str, started: float, parts: list | None = None) -> dict[str, Any]:
    out = {"passed": passed, "check_reason": "" if passed else reason, "check_seconds": time.perf_counter() - started}
    if parts is not None:
        out["check_parts"] = parts
    return out


def check_file(path: Path) -> dict[str, Any]:
    """Run one check file here (in the child): its module code, then each ``test_*`` function."""
    spec = importlib.util.spec_from_file_location("check", path)
    if spec is None or spec.loader is None:
        return {"passed": False, "reason": f"{path} is not a Python file"}
    module = importlib.util.module_from_spec(spec)
    sys.modules["check"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - any failure of the check is its result
        return {"passed": False, "reason": _why(exc, path, "check.py")}
    tests = [(name, fn) for name, fn in vars(module).items() if name.startswith("test") and callable(fn)]
    for name, fn in tests:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001
            return {"passed": False, "reason": _why(exc, path, name)}
    return {"passed": True, "reason": "", "checks": len(tests)}


def _why(exc: BaseException, path: Path, where: str) -> str:
    """One line: where it failed and why (the assert's message, else its line of check.py)."""
    message = str(exc).strip()
    if isinstance(exc, AssertionError):
        if not message:
            lines = [f.line for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
            message = lines[-1] if lines and lines[-1] else "assertion failed"
    else:
        message = f"{type(exc).__name__}: {message}"
    first = " ".join(message.split())
    return f"{where}: {first}"[:500]


def main(argv: list[str] | None = None) -> int:
    check, out = (argv if argv is not None else sys.argv[1:])[:2]
    without_iri_format_check()  # a check reads notebooks with nbformat: over a second of CPU per check
    sys.path.append(os.getcwd())  # the workspace's own modules, after everything else
    result = check_file(Path(check).resolve())
    Path(out).write_text(json.dumps(result), encoding="utf-8")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
