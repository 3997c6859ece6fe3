"""Benchmark data at a pinned release: the real download path, fed a local archive (no network here)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tarfile

import pytest

from nbagent.errors import ConfigError
from nbagent.evals.public import dabstep_tasks
from nbagent.evals.public.dseval_format import load_benchmark
from nbagent.evals.public.dseval_tasks import locate
from nbagent.evals.public.fetch import download, fetch_tree, git_tree_id

from .models import DABSTEP, DSEVAL


@pytest.mark.process  # git
def test_a_folders_git_tree_id_is_the_one_git_gives_it(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(DSEVAL, repo / "benchmarks")
    (repo / "benchmarks" / "exercise" / "run.sh").write_text("#!/bin/sh\n")
    (repo / "benchmarks" / "exercise" / "run.sh").chmod(0o755)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    tree = subprocess.run([*git, "write-tree", "--prefix=benchmarks/"], check=True, capture_output=True, text=True)
    assert git_tree_id(repo / "benchmarks") == tree.stdout.strip()


def _release(tmp_path, top="dseval-0123abc"):
    """A release archive as GitHub makes them: one top folder holding the repository."""
    archive = tmp_path / "release.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(DSEVAL, arcname=f"{top}/benchmarks")
        tar.add(DSEVAL / "README.md", arcname=f"{top}/README.md")
    return archive


def test_a_release_is_unpacked_when_its_tree_is_the_pinned_one_and_refused_otherwise(tmp_path, monkeypatch):
    url = _release(tmp_path).as_uri()
    pinned = git_tree_id(DSEVAL)
    with pytest.raises(ConfigError, match="is not the pinned release: git tree"):
        fetch_tree(url, tmp_path / "cache" / "benchmarks", "benchmarks", "0" * 40)
    assert not (tmp_path / "cache" / "benchmarks").exists()

    monkeypatch.setenv("NBAGENT_BENCHMARKS", str(tmp_path / "cache"))
    folder, source = locate(None, "exercise", url=url, tree=pinned)
    assert folder == tmp_path / "cache" / f"dseval-d813031dd869" / "benchmarks" / "exercise"
    assert "pinned release" in source and len(load_benchmark(folder).sets) == 2
    folder_again, _ = locate(None, "exercise", url="file:///nowhere.tar.gz", tree=pinned)  # cached: no download
    assert folder_again == folder


def test_a_download_with_another_checksum_is_refused(tmp_path):
    source = DABSTEP / "tasks" / "dev.jsonl"
    right = hashlib.sha256(source.read_bytes()).hexdigest()
    assert download(source.as_uri(), tmp_path / "dev.jsonl", right).read_bytes() == source.read_bytes()
    with pytest.raises(ConfigError, match="does not have the pinned checksum"):
        download(source.as_uri(), tmp_path / "other.jsonl", "f" * 64)
    assert not (tmp_path / "other.jsonl").exists()


def test_dabstep_files_are_checked_against_the_pins(tmp_path, monkeypatch):
    """The synthetic mini-dataset is not DABStep's data: the pinned download path refuses it."""
    monkeypatch.setenv("NBAGENT_BENCHMARKS", str(tmp_path / "cache"))
    base = DABSTEP.as_uri() + "/{path}"
    with pytest.raises(ConfigError, match="tasks/dev.jsonl does not have the pinned checksum"):
        dabstep_tasks.locate(base_url=base)
    assert dabstep_tasks.locate(DABSTEP) == DABSTEP  # a local copy is used as it is
    questions = dabstep_tasks.questions(DABSTEP)
    assert [q.task_id for q in questions] == ["1", "5", "49"]  # one without an answer is left out
