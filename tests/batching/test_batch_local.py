"""nbagent.batch run locally against the scripted HTTP server: rows, diffs, sessions, failures, clean-up."""

from __future__ import annotations

import pandas as pd
import pytest

import nbagent
from nbagent.errors import ConfigError
from nbagent.store.sessions import SessionStore

from .conftest import git


@pytest.mark.process
def test_each_task_edits_its_own_copy_and_comes_back_as_a_row(repo, model_options):
    head = git(repo, "rev-parse", "HEAD")
    tasks = pd.DataFrame({"name": ["alpha", "beta", "gamma"]})
    seen = []
    df = nbagent.batch(tasks, prompt="write {name}", workspace=repo, concurrency=3, approval="auto",
                       progress=lambda done, total, row: seen.append((done, total)), **model_options)
    assert list(df["task"]) == [0, 1, 2] and list(df["prompt"]) == ["write alpha", "write beta", "write gamma"]
    assert list(df["reason"]) == ["done"] * 3 and df["error"].isna().all()
    assert list(df["text"]) == ["answered: write alpha", "answered: write beta", "answered: write gamma"]
    assert list(df["files_changed"]) == [["alpha.txt"], ["beta.txt"], ["gamma.txt"]]
    assert "+write beta" in df.loc[1, "diff"] and (df["tool_calls"] == 1).all()
    assert (df["input_tokens"] > 0).all()
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]
    # the user's checkout is untouched, the copies are gone, the sessions stayed in the workspace
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""
    assert not (repo / "alpha.txt").exists()
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (repo / ".nbagent" / "batch" / df.attrs["batch_id"]).exists()
    with SessionStore(repo) as store:
        for sid, prompt in zip(df["session_id"], df["prompt"]):
            assert store.messages(sid)[0]["message"]["content"] == prompt


@pytest.mark.process
def test_read_only_denies_writes_and_a_failure_is_a_row(tmp_path, model_options):
    (tmp_path / "data.txt").write_text("x\n")
    df = nbagent.batch(["write one", "fail here"], workspace=tmp_path, approval="read-only", concurrency=2,
                       progress=False, **model_options)
    ok, failed = df.iloc[0], df.iloc[1]
    assert ok["reason"] == "done" and ok["files_changed"] == [] and ok["diff"] == ""
    assert failed["reason"] == "error" and "refuses" in failed["error"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".nbagent", "data.txt"]


def test_approval_must_be_chosen(tmp_path):
    with pytest.raises(ConfigError, match="explicit approval"):
        nbagent.batch(["x"], workspace=tmp_path)
    with pytest.raises(ConfigError, match="explicit approval"):
        nbagent.batch(["x"], workspace=tmp_path, approval="ask")


def test_a_template_naming_a_missing_column_fails_before_anything_runs(tmp_path):
    with pytest.raises(ConfigError, match="'path'"):
        nbagent.batch(pd.DataFrame({"name": ["a"]}), prompt="Summarise {path}", workspace=tmp_path,
                      approval="auto")


@pytest.mark.process
def test_the_cli_reads_a_csv_and_writes_the_results(repo, model_server, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    tasks = tmp_path / "tasks.csv"
    tasks.write_text("name\nalpha\nbeta\n")
    out = tmp_path / "results.csv"
    env = {**os.environ, "OPENAI_BASE_URL": model_server.url, "OPENAI_API_KEY": "sk-test",
           "NBAGENT_MODEL": "scripted-model", "NBAGENT_LOCAL": "off", "NBAGENT_MEMORY": "0"}
    nbagent_cli = Path(sys.executable).parent / "nbagent"
    done = subprocess.run([str(nbagent_cli), "batch", str(tasks), "--prompt", "write {name}", "--out", str(out),
                           "--workspace", str(repo), "--approval", "auto", "-j", "2"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "2 tasks, 0 failed" in done.stderr
    df = pd.read_csv(out)
    assert list(df["text"]) == ["answered: write alpha", "answered: write beta"]
    assert list(df["files_changed"]) == ["['alpha.txt']", "['beta.txt']"]

    refused = subprocess.run([str(nbagent_cli), "batch", str(tasks), "--prompt", "write {name}", "--out",
                              str(out), "--workspace", str(repo)], env=env, capture_output=True, text=True)
    assert refused.returncode == 2 and "--approval" in refused.stderr


@pytest.mark.process
def test_a_state_folder_that_is_a_link_gets_no_copies(tmp_path, model_options):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / ".nbagent").symlink_to(elsewhere)
    df = nbagent.batch(["write one"], workspace=work, approval="auto", progress=False, **model_options)
    assert df.loc[0, "error"] and list(elsewhere.iterdir()) == []


@pytest.mark.process
def test_every_task_sees_the_repo_map_of_its_copy(repo, model_server, model_options):
    """The map is built once per process and given to each copy (same commit, same files): every
    task's first request carries it, as an agent of its own would have built it."""
    from nbagent.batching import task as batch_task

    batch_task._MAPS.clear()
    df = nbagent.batch(["write a", "write b", "write c"], workspace=repo, approval="auto", concurrency=2,
                       progress=False, **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    firsts = [r.body for r in model_server.model_requests() if r.body and r.body["messages"][-1]["role"] == "user"]
    assert len(firsts) == 3
    for body in firsts:
        system = body["messages"][0]["content"]
        assert "Repository map" in system and "src/util.py" in system and "def f()" in system
    assert len(batch_task._MAPS) == 1  # built once


@pytest.mark.process
def test_copies_are_made_a_few_at_a_time(repo, model_options, monkeypatch):
    """One copy at a time per two cores: copies made together only slow each other down and start
    their tasks in lockstep."""
    import os
    import threading
    import time

    from nbagent.batching import task as batch_task

    real, inside, most = batch_task.make_copy, [0], [0]
    lock = threading.Lock()

    def counting(*args, **kwargs):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            time.sleep(0.05)  # long enough for the others to arrive meanwhile
            return real(*args, **kwargs)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(batch_task, "make_copy", counting)
    df = nbagent.batch([f"write w{i}" for i in range(6)], workspace=repo, approval="auto", concurrency=6,
                       progress=False, **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    assert most[0] == min(6, max(1, (os.cpu_count() or 2) // 2))


@pytest.mark.process
def test_the_workspace_database_is_opened_once_a_batch_and_copies_keep_no_journal(repo, model_options,
                                                                                 monkeypatch):
    from pathlib import Path

    from nbagent.engine.agent import Agent
    from nbagent.batching import task
    from nbagent.store import db

    opened, configs = [], []
    real_database, real_agent = db.Database.__init__, Agent.__init__

    def counting(self, path):
        opened.append(Path(path))
        real_database(self, path)

    def recording(self, *args, **kwargs):
        real_agent(self, *args, **kwargs)
        configs.append(self.config)

    monkeypatch.setattr(db.Database, "__init__", counting)
    monkeypatch.setattr(Agent, "__init__", recording)
    df = nbagent.batch([f"write t{i}" for i in range(4)], workspace=repo, concurrency=2, approval="auto",
                       progress=False, **model_options)
    assert df["error"].isna().all() and len(configs) == 4
    assert [p for p in opened if p.parents[1] == repo.resolve()] == [repo.resolve() / ".nbagent" / "nbagent.db"]
    assert task._STORES == {}  # closed when the batch ended
    with SessionStore(repo) as store:
        assert {store.messages(sid)[0]["message"]["content"] for sid in df["session_id"]} == set(df["prompt"])
    # what would only be written into a copy, and thrown away with it
    assert not any(c.sweep_temp_files or c.recovery_journal or c.telemetry for c in configs)


@pytest.mark.process
def test_tasks_run_with_the_heap_from_before_the_batch_frozen(repo, model_options, monkeypatch, thawed_heap):
    """A full pass of the cycle collector during a batch walks only what the batch made (batching.heap)."""
    import gc

    from nbagent.batching import task as batch_task

    real, counts = batch_task.make_copy, []

    def recording(*args, **kwargs):
        counts.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(batch_task, "make_copy", recording)
    df = nbagent.batch(["write a", "write b"], workspace=repo, approval="auto", concurrency=2, progress=False,
                       **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    assert len(counts) == 2 and min(counts) > 1000
    assert gc.get_freeze_count() == 0
