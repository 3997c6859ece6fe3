"""Checkpoints in a real git repository: round trips byte for byte, the user's git state untouched."""

from __future__ import annotations

import json
import subprocess

import pytest

from nbagent.checkpoints import KEEP, CheckpointConflict, CheckpointError, Checkpoints

from .repos import files_of, git, user_view

pytestmark = pytest.mark.process


def checkpoints(repo, session="S1"):
    state = repo / ".nbagent"
    state.mkdir(exist_ok=True)
    (state / ".gitignore").write_text("*\n")
    return Checkpoints(repo, state, session)


def edit_turn(cp, turn, change):
    cp.begin_turn(turn, f"turn_{turn}")
    cp.before_change()
    change()
    return cp.end_turn()


def agent_edits(repo):
    (repo / "crlf.txt").write_bytes(b"one\r\nTWO\r\nthree\r\n")
    (repo / "data.bin").unlink()
    (repo / "created.py").write_text("new = True\n")
    nb = json.loads((repo / "analysis.ipynb").read_text())
    nb["cells"][0]["source"] = ["x = 2\n"]
    (repo / "analysis.ipynb").write_text(json.dumps(nb, indent=1))
    (repo / "run.sh").chmod(0o644)
    (repo / "node_modules" / "dep.js").write_text("changed, but ignored\n")


def test_undo_redo_round_trip_byte_for_byte_and_git_untouched(project):
    before_files, before_git = files_of(project), user_view(project)
    cp = checkpoints(project)
    entry = edit_turn(cp, 1, lambda: agent_edits(project))
    assert entry is not None
    assert entry.files == ["analysis.ipynb", "created.py", "crlf.txt", "data.bin", "run.sh"]
    after_files = files_of(project)

    restored = cp.undo()
    assert restored.turn == 1 and set(restored.files) == set(entry.files)
    now = files_of(project)
    # node_modules is ignored: not in the snapshot, so undo leaves the agent's change there.
    assert now.pop("node_modules/dep.js") == b"changed, but ignored\n"
    assert now == {k: v for k, v in before_files.items() if k != "node_modules/dep.js"}
    assert (project / "run.sh").stat().st_mode & 0o111
    assert json.loads((project / "analysis.ipynb").read_text())["cells"][0]["id"] == "c1"

    cp.redo()
    assert files_of(project) == after_files
    assert not (project / "run.sh").stat().st_mode & 0o111
    cp.undo()
    assert user_view(project) == before_git
    refs = git(project, "for-each-ref", "refs/nbagent/")
    assert "refs/nbagent/S1/turn-1/before" in refs and " tree\t" in refs


def test_a_turn_that_changes_nothing_takes_no_checkpoint(project):
    cp = checkpoints(project)
    assert edit_turn(cp, 1, lambda: (project / "node_modules" / "x.js").write_text("ignored")) is None
    cp.begin_turn(2, "turn_2")  # no mutating call at all
    assert cp.end_turn() is None
    assert cp.list() == []
    with pytest.raises(CheckpointError, match="nothing to undo"):
        cp.undo()


def test_repeated_undo_walks_back_and_a_new_turn_drops_redo(project):
    cp = checkpoints(project)
    original = files_of(project)
    for turn in (1, 2, 3):
        edit_turn(cp, turn, lambda t=turn: (project / "notes.txt").write_text(f"turn {t}\n"))
    assert [cp.undo().turn for _ in range(3)] == [3, 2, 1]
    assert files_of(project) == original
    assert cp.redo().turn == 1
    assert (project / "notes.txt").read_text() == "turn 1\n"
    edit_turn(cp, 4, lambda: (project / "other.txt").write_text("x"))
    assert [e.turn for e in cp.list()] == [1, 4]
    with pytest.raises(CheckpointError, match="nothing to redo"):
        cp.redo()
    assert "turn-2" not in git(project, "for-each-ref", "refs/nbagent/")


def test_undo_refuses_when_someone_else_changed_a_file_and_force_overwrites(project):
    cp = checkpoints(project)
    edit_turn(cp, 1, lambda: (project / "crlf.txt").write_text("agent\n"))
    (project / "crlf.txt").write_text("the user's own edit\n")
    (project / "unrelated.txt").write_text("also the user\n")
    with pytest.raises(CheckpointConflict) as err:
        cp.undo()
    assert err.value.paths == ["crlf.txt"] and "crlf.txt" in str(err.value)
    assert (project / "crlf.txt").read_text() == "the user's own edit\n"  # nothing restored
    cp.undo(force=True)
    assert (project / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (project / "unrelated.txt").read_text() == "also the user\n"  # not the turn's path


def test_manifest_keeps_the_newest_checkpoints_and_drops_older_refs(project):
    cp = checkpoints(project)
    for turn in range(1, KEEP + 3):
        edit_turn(cp, turn, lambda t=turn: (project / "notes.txt").write_text(f"{t}\n"))
    assert [e.turn for e in cp.list()] == list(range(3, KEEP + 3))
    refs = git(project, "for-each-ref", "--format=%(refname)", "refs/nbagent/").split()
    assert len(refs) == 2 * KEEP and "refs/nbagent/S1/turn-1/before" not in refs
    cp.delete()
    assert git(project, "for-each-ref", "refs/nbagent/") == ""


def test_diff_of_a_turn(project):
    cp = checkpoints(project)
    edit_turn(cp, 1, lambda: agent_edits(project))
    diff = cp.diff(1)
    assert "-two\r\n+TWO\r\n" in diff.replace("\r\n", "\r\n")
    assert "Binary file data.bin changed" in diff and "+new = True" in diff
    with pytest.raises(CheckpointError, match="turn 9 has no checkpoint"):
        cp.diff(9)


def test_workspace_in_a_subdirectory_of_the_repository(project):
    sub = project / "src"
    cp = checkpoints(sub)
    entry = edit_turn(cp, 1, lambda: ((sub / "app.py").write_text("sub\n"), (project / "top.txt").write_text("t")))
    assert entry.files == ["app.py"]  # outside the workspace: not ours
    cp.undo()
    assert (sub / "app.py").read_text() == "print('hi, dirty')\n"
    assert (project / "top.txt").exists()


def test_hostile_repository_config_runs_nothing(project, tmp_path):
    marker = tmp_path / "pwned"
    with open(project / ".git" / "config", "a") as cfg:
        cfg.write(f'[core]\n\tfsmonitor = "touch {marker}"\n\thooksPath = {tmp_path}\n'
                  f'[filter "evil"]\n\tclean = "touch {marker}; cat"\n\tsmudge = "touch {marker}; cat"\n'
                  f'\trequired = true\n[diff "evil"]\n\ttextconv = "touch {marker}; cat"\n')
    for hook in ("reference-transaction", "post-index-change", "pre-commit"):
        (tmp_path / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (tmp_path / hook).chmod(0o755)
    (project / ".gitattributes").write_text("* filter=evil diff=evil text eol=crlf\n")
    cp = checkpoints(project)
    edit_turn(cp, 1, lambda: (project / "notes.txt").write_bytes(b"lf only\n"))
    cp.diff(1)
    cp.undo()
    cp.redo()
    assert (project / "notes.txt").read_bytes() == b"lf only\n"  # no eol conversion either
    assert not marker.exists()


def test_symlink_out_of_the_workspace_is_not_followed_on_restore(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    cp = checkpoints(project)
    edit_turn(cp, 1, lambda: (project / "src" / "app.py").unlink())
    # Someone replaces src/ with a link to a directory outside the workspace.
    (project / "src").rmdir()
    (project / "src").symlink_to(outside)
    with pytest.raises(CheckpointError, match="outside"):
        cp.undo(force=True)
    assert list(outside.iterdir()) == []


def test_git_gc_keeps_checkpoint_objects(project):
    cp = checkpoints(project)
    edit_turn(cp, 1, lambda: (project / "fresh.txt").write_text("only in a checkpoint\n"))
    (project / "fresh.txt").unlink()
    subprocess.run(["git", "gc", "-q", "--prune=now"], cwd=project, check=True)
    cp.begin_turn(2, "turn_2")
    cp.undo(force=True)  # back to before turn 1: fresh.txt absent
    cp.redo(force=True)
    assert (project / "fresh.txt").read_text() == "only in a checkpoint\n"


def test_state_dir_ignored_by_the_users_gitignore_and_without_its_own(project):
    with open(project / ".gitignore", "a") as f:
        f.write(".nbagent/\n")
    cp = checkpoints(project)
    (project / ".nbagent" / ".gitignore").unlink()
    (project / ".nbagent" / "big-state.db").write_text("never snapshotted")
    entry = edit_turn(cp, 1, lambda: (project / "notes.txt").write_text("x\n"))
    assert entry.files == ["notes.txt"]
    tree = git(project, "ls-tree", "-r", "--name-only", entry.after)
    assert ".nbagent" not in tree and "node_modules" not in tree and "notes.txt" in tree


def test_a_lock_left_by_a_killed_snapshot_does_not_block_the_next(project):
    cp = checkpoints(project)
    edit_turn(cp, 1, lambda: (project / "notes.txt").write_text("1\n"))
    (project / ".nbagent" / "checkpoints" / "git" / "index.lock").write_text("")  # killed mid `git add`
    assert edit_turn(cp, 2, lambda: (project / "notes.txt").write_text("2\n")) is not None
