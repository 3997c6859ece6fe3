"""Issue 26, finding 8: ignore rules from the workspace are matched in bounded time (RE2, not backtracking)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from nbagent.workspace.walker import list_files, start_ignored

pytestmark = pytest.mark.process

LONG = "a" * 60 + "b"


@pytest.fixture
def redos_tree(tmp_path):
    (tmp_path / ".gitignore").write_text("*a" * 12 + "\n!keep.txt\n*.log\n")
    (tmp_path / LONG).mkdir()
    (tmp_path / LONG / "x.txt").write_text("x")
    (tmp_path / LONG / "y.log").write_text("y")
    (tmp_path / "keep.txt").write_text("k")
    return tmp_path


def test_a_backtracking_ignore_line_is_listed_at_once(redos_tree):
    # In a child process: Python's regex engine holds the GIL, so a hung match could not be timed out here.
    code = (f"from pathlib import Path; from nbagent.workspace.walker import list_files, start_ignored;"
            f"print(sorted(list_files(Path({str(redos_tree)!r}), engine='pathspec')));"
            f"print(start_ignored(Path({str(redos_tree)!r}), {LONG!r}))")
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("the ignore rules did not match within 20 s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str([".gitignore", f"{LONG}/x.txt", "keep.txt"]), "False"]
    assert time.monotonic() - started < 15


def test_both_engines_still_agree_on_the_hostile_rules(redos_tree):
    expected = [".gitignore", f"{LONG}/x.txt", "keep.txt"]
    assert sorted(list_files(redos_tree, engine="pathspec")) == expected
    assert sorted(list_files(redos_tree)) == expected
    assert list_files(redos_tree, start=LONG, engine="pathspec") == [f"{LONG}/x.txt"]
    assert not start_ignored(redos_tree, LONG)
