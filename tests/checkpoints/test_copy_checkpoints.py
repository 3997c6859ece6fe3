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


@pytest.mark.parametrize("in_git", [False, True], ids=["copy", "git"])
def test_the_copy_a_jupyter_save_is_writing_is_not_a_change_of_the_turn(tmp_path, in_git):
    """jupyter_server saves through ``.~<name>`` beside the file: a turn that ends while the user's save
    (or the live notebook's) is under way lists the notebook alone, and undo leaves Jupyter's copy be."""
    import subprocess

    root = tmp_path / "work"
    root.mkdir()
    (root / "work.ipynb").write_text("before\n")
    if in_git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    cp = make(root)
    cp.begin_turn(1, "t1")
    cp.before_change()
    (root / "work.ipynb").write_text("after\n")
    (root / ".~work.ipynb").write_text("after, being saved\n")
    entry = cp.end_turn()
    assert cp.store.kind == ("git" if in_git else "copy")
    assert entry.files == ["work.ipynb"]
    cp.undo()
    assert (root / "work.ipynb").read_text() == "before\n"
    assert (root / ".~work.ipynb").read_text() == "after, being saved\n"
