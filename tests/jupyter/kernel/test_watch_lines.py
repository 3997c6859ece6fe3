"""The watcher's lines (nbagent.jupyter.kernel.watch) in a real InteractiveShell: each caller's record is
kept apart, undone and redone by further lines, and arguments are data, never code."""

from __future__ import annotations

import contextlib
import io

import pytest

from nbagent.jupyter.kernel import watch as watcher
from nbagent.jupyter.kernel.probe import answer_of
from nbagent.jupyter.kernel.watch import watch_code


@pytest.fixture
def line(shell):
    def send(action: str, **args) -> dict:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            shell.run_cell(watch_code(action, args), silent=True, store_history=False)
        answer = answer_of(out.getvalue())
        assert answer is not None, out.getvalue()
        return answer

    return send


def _call(shell, line, owner: str, key: str, code: str, **args) -> dict:
    assert line("before", owner=owner, key=key, **args) == {"ok": True}
    shell.run_cell(code)
    return line("after", owner=owner, key=key, **args)


def test_each_caller_undoes_and_redoes_only_its_own_calls(shell, line):
    shell.run_cell("x = 'user'\nrows = []")
    first = _call(shell, line, "a", "k1", "x = 'a'\nrows.append(1)\ntmp = 1")
    assert first["change"] == {"added": ["tmp"], "rebound": ["x"], "deleted": [], "mutated": ["rows"], "unchecked": []}
    assert first["turn"] == 1 and [r["call_id"] for r in first["records"]] == ["k1"]  # numbered by the kernel
    second = _call(shell, line, "b", "k2", "y = 'b'")
    assert second["turn"] == 1 and [r["call_id"] for r in second["records"]] == ["k2"]

    undone = line("undo", owner="a")
    assert (undone["turn"], undone["restored"]) == (1, ["tmp", "x"])
    assert undone["not_restored"] == ["rows (changed in place)"]
    assert shell.user_ns["x"] == "user" and "tmp" not in shell.user_ns and shell.user_ns["y"] == "b"
    assert line("targets", owner="a")["redo"] == 1 and line("targets", owner="b")["undo"] == 1
    assert line("redo", owner="a")["restored"] == ["tmp", "x"] and shell.user_ns["x"] == "a"

    shell.run_cell("x = 'user again'")
    assert line("conflicts", owner="a", of="undo", turn=1) == {"conflicts": ["x"]}
    refused = line("undo", owner="a")
    assert refused["conflict"] == ["x"] and "you changed these kernel variables since: x" in refused["message"]
    assert shell.user_ns["x"] == "user again"
    assert line("undo", owner="a", force=True)["restored"] == ["tmp", "x"] and shell.user_ns["x"] == "user"

    assert line("release", owner="a")["records"] == []
    assert "holds no record" in line("undo", owner="a")["error"]
    assert line("undo", owner="b")["restored"] == ["y"]  # the other caller's record is untouched


def test_a_call_without_an_owner_is_shown_and_forgotten(shell, line):
    shown = _call(shell, line, "", "k", "z = 1")
    assert shown["change"]["added"] == ["z"] and "records" not in shown
    assert line("undo")["error"].startswith("nothing to undo")


def test_arguments_are_data_not_code(shell, line):
    hostile = "x\"); import os; os._exit(3); (\"\n😀"
    answer = _call(shell, line, hostile, hostile, "w = 1")
    assert answer["change"]["added"] == ["w"]
    assert line("targets", owner=hostile)["records"][0]["call_id"] == hostile
    assert "unknown watch action" in line("drop_everything", owner=hostile)["error"]


def test_the_least_recently_used_caller_is_released_past_the_limit(shell, line, monkeypatch):
    monkeypatch.setattr(watcher, "MAX_OWNERS", 2)
    for index, owner in enumerate(("a", "b", "c")):
        _call(shell, line, owner, f"k{index}", f"v{index} = {index}")
    assert "holds no record" in line("undo", owner="a")["error"]
    assert line("undo", owner="c")["restored"] == ["v2"]


def test_the_cap_releases_the_oldest_values_and_says_so(shell, line):
    shell.run_cell("big = bytes(600_000)")
    _call(shell, line, "a", "k1", "big = bytes(600_001)", max_bytes=1_000_000)
    second = _call(shell, line, "a", "k2", "big = bytes(600_002)", max_bytes=1_000_000)
    assert second["dropped"] == ["big (turn 1)"]
    assert line("undo", owner="a")["restored"] == ["big"] and len(shell.user_ns["big"]) == 600_001
    assert line("undo", owner="a")["not_restored"] == ["big (its old value was released by the memory cap)"]
