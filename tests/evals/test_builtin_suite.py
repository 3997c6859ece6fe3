"""The built-in suite's checks are tested: each task's reference solution passes it, its untouched workspace fails it.

So no check passes by doing nothing, and none fails the right result. Each check runs as an eval
runs it: in a fresh process, in a copy of the workspace, with the reference's answer (or none).
"""

from __future__ import annotations

import concurrent.futures
import shutil
from pathlib import Path

import pytest

from nbagent.evals import load_suite
from nbagent.evals.runner import run_check
from nbagent.evals.task import Task
from tests.paths import CHECKOUT

SUITE = load_suite()


def finished(task: Task, dest: Path, *, solved: bool) -> Path:
    """The task's workspace as the agent would leave it: untouched, or with the solution laid over it."""
    shutil.copytree(task.workspace, dest)
    if solved and task.solution.is_dir():
        shutil.copytree(task.solution, dest, dirs_exist_ok=True)
    return dest


def test_the_suite_is_large_and_covers_the_kinds_of_work():
    assert len(SUITE.tasks) >= 30 and SUITE.version
    tags = {tag for task in SUITE.tasks for tag in task.tags}
    assert {"fix-cell", "explain-error", "plot", "refactor", "csv-answer", "run-all", "rename", "add-test",
            "dtypes", "keep-cells", "read-only"} <= tags
    for task in SUITE.tasks:
        size = sum(p.stat().st_size for p in task.folder.rglob("*") if p.is_file())
        assert size < 20_000, f"{task.name} is {size} bytes: tasks are small"
        assert task.solution.is_dir() or task.solution_answer, f"{task.name} has no reference solution"


@pytest.mark.process
def test_every_reference_passes_and_every_untouched_workspace_fails(tmp_path):
    def judge(task: Task) -> tuple[str, dict, dict]:
        solved = run_check(task.folder, finished(task, tmp_path / task.name / "solved", solved=True),
                           task.solution_answer)
        untouched = run_check(task.folder, finished(task, tmp_path / task.name / "untouched", solved=False), "")
        return task.name, solved, untouched

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(judge, SUITE.tasks))
    wrong = [f"{name}: the reference fails: {solved['check_reason']}" for name, solved, _ in results
             if not solved["passed"]]
    wrong += [f"{name}: the untouched workspace passes" for name, _, untouched in results if untouched["passed"]]
    assert not wrong, "\n".join(wrong)
    assert all(untouched["check_reason"] for _, _, untouched in results)


@pytest.mark.process
@pytest.mark.parametrize("name", ["fix-name-error"])
def test_a_failed_check_says_why_in_one_line(tmp_path, name):
    task = next(t for t in SUITE.tasks if t.name == name)
    result = run_check(task.folder, finished(task, tmp_path / "w", solved=False))
    assert not result["passed"]
    assert result["check_reason"].startswith("test_the_notebook_runs_and_prints_the_total: report.ipynb: a cell "
                                             "failed when run top to bottom: NameError")


def test_the_wheel_ships_the_suite():
    """Every file of every task goes into the wheel (hatch's file selection, without building)."""
    builder = pytest.importorskip("hatchling.builders.wheel")
    root = CHECKOUT
    shipped = {f.distribution_path for f in builder.WheelBuilder(str(root)).recurse_included_files()}
    suite_files = {f"nbagent/evals/suite/{p.relative_to(SUITE.folder).as_posix()}"
                   for p in SUITE.folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert len(suite_files) > 100 and suite_files <= shipped, sorted(suite_files - shipped)[:5]
