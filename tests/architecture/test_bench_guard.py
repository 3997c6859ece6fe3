"""The project's performance guard, cross-cutting as the layout checks are: bench/guard.py runs the
figures other issues add (each bench's ``guard()``) in a process of its own, capped in time; a bench
that hangs, fails or returns something else is a reported miss, never a guard that hangs or dies
(issue 41). Real processes, real bench files written into a temporary folder."""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import time
from pathlib import Path

import pytest

from tests.paths import CHECKOUT

pytestmark = pytest.mark.process  # each bench runs in a process of its own

BENCH = CHECKOUT / "bench"


def load_guard():
    spec = importlib.util.spec_from_file_location("bench_guard_under_test", BENCH / "guard.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    before = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        # guard.py puts bench/ first on the path, where bench/acp.py would shadow the ACP SDK for every later
        # test of this process (and the PYTHONPATH its subprocesses inherit): the guard's own run needs it, a test not.
        sys.path[:] = before
    return module


guard = load_guard()


def test_the_later_benches_are_the_files_the_issues_name():
    assert {file for _, file in guard.LATER.values()} == {"images.py", "sandbox.py", "completions.py", "acp.py"}


def bench_with(tmp_path: Path, body: str) -> Path:
    (tmp_path / "images.py").write_text(body, encoding="utf-8")
    return tmp_path


def test_a_bench_without_guard_is_not_yet_measured_and_no_miss(tmp_path):
    figures = guard.later_figures("image_encode", 30, bench_with(tmp_path, "def main():\n    pass\n"))
    assert [(f.value, f.ok) for f in figures] == [(None, False)]
    assert "has no guard() yet" in figures[0].note
    assert guard.later_figures("completion", 30, tmp_path)[0].note == "(no bench/completions.py yet)"


def test_the_rows_guard_returns_become_figures(tmp_path):
    body = ("print('chatter on stdout is fine')\n"
            "def guard():\n"
            "    return [('encode ms', 12.5, '< 50 ms', True), ('share', 0.9, '<= 0.5', False)]\n")
    figures = guard.later_figures("image_encode", 30, bench_with(tmp_path, body))
    assert [(f.name, f.value, f.goal, f.ok) for f in figures] == [
        ("encode ms", 12.5, "< 50 ms", True), ("share", 0.9, "<= 0.5", False)]


def test_a_bench_that_raises_is_a_miss_with_its_error(tmp_path):
    body = "def guard():\n    raise RuntimeError('no bubblewrap here')\n"
    [figure] = guard.later_figures("image_encode", 30, bench_with(tmp_path, body))
    assert math.isnan(figure.value) and not figure.ok
    assert "RuntimeError: no bubblewrap here" in figure.note


def test_a_bench_that_returns_something_else_is_a_miss(tmp_path):
    body = "def guard():\n    return {'encode ms': 12.5}\n"
    [figure] = guard.later_figures("image_encode", 30, bench_with(tmp_path, body))
    assert math.isnan(figure.value) and not figure.ok and "not (name, value, goal, ok) rows" in figure.note


def test_a_bench_that_hangs_is_cut_at_its_cap_with_what_it_started(tmp_path):
    pid_file = tmp_path / "child.pid"
    body = ("import subprocess, sys, time\n"
            "def guard():\n"
            "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"    open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "    time.sleep(60)\n")
    started = time.monotonic()
    [figure] = guard.later_figures("image_encode", 3, bench_with(tmp_path, body))
    assert time.monotonic() - started < 15
    assert math.isnan(figure.value) and not figure.ok and "took over 3 s" in figure.note
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and alive(grandchild):
        time.sleep(0.05)
    assert not alive(grandchild), "the process the bench started outlived the guard's run of it"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_spent_budget_runs_nothing_and_says_so(tmp_path):
    body = "def guard():\n    return [('encode ms', 1.0, '< 50 ms', True)]\n"
    [figure] = guard.later_figures("image_encode", 0.5, bench_with(tmp_path, body))
    assert not figure.ok and "budget is spent" in figure.note
    assert os.path.exists(tmp_path / "images.py")
