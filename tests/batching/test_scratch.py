"""Where task copies go: a private folder in RAM when the running tasks' copies fit, else the disk."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from shutil import _ntuple_diskusage as shutil_usage

import nbagent
from nbagent.batching import scratch
from nbagent.batching.isolation import snapshot
from nbagent.batching.task import TaskSpec

pytestmark = pytest.mark.process


@pytest.fixture
def ram(tmp_path, monkeypatch):
    """A folder standing in for /dev/shm, and this process's private folders forgotten before and after."""
    folder = tmp_path / "ram"
    folder.mkdir()
    monkeypatch.setattr(scratch, "RAM_FOLDERS", (str(folder),))
    monkeypatch.delenv("NBAGENT_BATCH_SCRATCH", raising=False)
    monkeypatch.setattr(scratch, "_mine", {})
    yield folder


def spec(workspace, concurrency=4) -> TaskSpec:
    return TaskSpec(index=3, prompt="p", workspace=str(workspace), batch_id="batch_x", source=None,
                    concurrency=concurrency)


def test_copies_go_to_a_private_ram_folder_when_they_fit(repo, ram):
    source = snapshot(repo)
    assert source.size == len("# demo\n") + len("def f():\n    return 1\n")  # the tree's bytes
    dest = spec(repo).copy_dir(source)
    private = dest.parent.parent
    assert private.parent == ram and private.name.startswith(f"nbagent-batch-{os.getuid()}-{os.getpid()}-")
    assert stat.S_IMODE(os.lstat(private).st_mode) == 0o700
    assert dest.parent.name == "batch_x" and dest.name.startswith("task-00003-")
    scratch.remove_batch("batch_x")
    assert not dest.parent.exists() and private.exists()


def test_copies_that_would_not_fit_go_to_the_workspace(repo, ram, monkeypatch):
    free = 64 << 20  # a container's small /dev/shm
    monkeypatch.setattr(scratch.shutil, "disk_usage", lambda path: shutil_usage(0, 0, free))
    source = snapshot(repo)
    big = source.__class__(**{**source.__dict__, "size": 8 << 20})  # 8 MB a copy, 4 at once: over a quarter
    assert spec(repo).copy_dir(big).parent == repo / ".nbagent" / "batch" / "batch_x"
    assert spec(repo, concurrency=1).copy_dir(big).parent.parent.parent == ram  # one at a time fits


def test_the_environment_chooses_the_disk_or_a_folder(repo, ram, tmp_path, monkeypatch):
    source = snapshot(repo)
    monkeypatch.setenv("NBAGENT_BATCH_SCRATCH", "disk")
    assert spec(repo).copy_dir(source).parent == repo / ".nbagent" / "batch" / "batch_x"
    mine = tmp_path / "fast"
    mine.mkdir()
    monkeypatch.setenv("NBAGENT_BATCH_SCRATCH", str(mine))
    assert spec(repo).copy_dir(source).parent.parent.parent == mine


def test_a_dead_process_folder_is_swept_and_nothing_else(ram, tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    uid = os.getuid()
    left = ram / f"nbagent-batch-{uid}-{dead}-abc"
    (left / "batch_y" / "task-00000-1").mkdir(parents=True)
    alive = ram / f"nbagent-batch-{uid}-{os.getppid()}-def"
    alive.mkdir()
    other_user = ram / f"nbagent-batch-{uid + 1}-{dead}-ghi"
    other_user.mkdir()
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("keep")
    planted = ram / f"nbagent-batch-{uid}-{dead}-lnk"
    planted.symlink_to(precious)
    assert scratch.sweep(ram) == [left]
    assert not left.exists() and alive.exists() and other_user.exists()
    assert (precious / "keep.txt").read_text() == "keep" and planted.is_symlink()


def test_a_batch_leaves_nothing_in_ram_or_in_the_workspace(repo, ram, model_options):
    df = nbagent.batch(["write one", "write two"], workspace=repo, approval="auto", concurrency=2,
                       progress=False, **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    assert sorted(map(tuple, df["files_changed"])) == [("one.txt",), ("two.txt",)]
    private = [p for p in ram.iterdir() if p.name.startswith("nbagent-batch-")]
    assert len(private) == 1 and list(private[0].iterdir()) == []  # the batch's folder went
    on_disk = repo / ".nbagent" / "batch"
    assert not on_disk.exists() or list(on_disk.iterdir()) == []  # no copy was made on disk


def test_a_copy_that_fails_in_ram_is_made_on_disk(repo, ram, model_options, monkeypatch):
    """RAM filled by someone else meanwhile: the copy is made beside the workspace instead, and the
    task runs."""
    from nbagent.batching import task as batch_task

    real, places = batch_task.make_copy, []

    def full_in_ram(source, dest):
        places.append(dest)
        if dest.is_relative_to(ram):
            dest.mkdir(parents=True)
            (dest / "partial").write_text("x")  # what a copy cut short leaves
            raise OSError(28, "No space left on device")
        return real(source, dest)

    monkeypatch.setattr(batch_task, "make_copy", full_in_ram)
    df = nbagent.batch(["write one"], workspace=repo, approval="auto", progress=False, **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    assert list(df["files_changed"]) == [["one.txt"]]
    assert [p.is_relative_to(ram) for p in places] == [True, False]
    assert not places[0].exists()  # the partial copy in RAM was removed
