"""Checkpoints outside a git repository: a content-addressed copy, with a size cap."""

from __future__ import annotations

import pytest

from nbagent.checkpoints import CheckpointError, Checkpoints

from .repos import files_of

pytestmark = pytest.mark.process


def make(root, max_bytes=10_000_000):
    state = root / ".nbagent"
    state.mkdir(exist_ok=True)
    return Checkpoints(root, state, "S1", max_bytes=max_bytes)


def test_round_trip_outside_a_repository(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.txt").write_bytes(b"a\r\n")
    (root / "bin.dat").write_bytes(b"\0\1\2")
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / "x.py").write_text("x\n")
    original = files_of(root)
    cp = make(root)
    cp.begin_turn(1, "t1")
    cp.before_change()
    (root / "a.txt").write_text("changed")
    (root / "deep" / "er" / "x.py").unlink()
    (root / "new.txt").write_text("new")
    entry = cp.end_turn()
    assert cp.store.kind == "copy"
    assert entry.files == ["a.txt", "deep/er/x.py", "new.txt"]
    changed = files_of(root)
    cp.undo()
    assert files_of(root) == original
    cp.redo()
    assert files_of(root) == changed
    assert not (root / "deep").exists()  # the directories the turn emptied go too


def test_copy_cap_gives_a_clear_error_and_no_partial_checkpoint(tmp_path):
    root = tmp_path / "big"
    root.mkdir()
    (root / "big.dat").write_bytes(b"x" * 5000)
    cp = make(root, max_bytes=4000)
    cp.begin_turn(1, "t1")
    assert cp.before_change() is False
    assert "above the checkpoint copy cap" in cp.error and "git init" in cp.error
    (root / "small.txt").write_text("s")
    assert cp.end_turn() is None
    assert cp.list() == []
