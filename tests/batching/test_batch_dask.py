"""nbagent.batch on a real Dask LocalCluster of two worker processes, one of them killed mid-batch."""

from __future__ import annotations

import functools
import threading

import psutil
import pytest

import nbagent
from nbagent.testing import ScriptedServer

from .conftest import git, writer

distributed = pytest.importorskip("dask.distributed")
pytestmark = [pytest.mark.process, pytest.mark.integration]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield client


def test_tasks_fan_out_over_two_worker_processes(repo, model_options, cluster):
    df = nbagent.batch([f"write t{i}" for i in range(6)], workspace=repo, approval="auto", client=cluster,
                       concurrency=4, progress=False, **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    assert list(df["files_changed"]) == [[f"t{i}.txt"] for i in range(6)]
    worker_pids = set(cluster.run(lambda: __import__("os").getpid()).values())
    assert set(df["pid"]) == worker_pids  # both worker processes ran tasks
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (repo / ".nbagent" / "batch").exists() or not any((repo / ".nbagent" / "batch").iterdir())


def test_a_worker_killed_mid_batch_loses_no_task(repo, cluster):
    with ScriptedServer(responder=functools.partial(writer, latency=0.4)) as server:
        options = {"model": "scripted-model", "base_url": server.url, "api_key": "sk-test", "max_retries": 0,
                   "memory": False}
        pids = cluster.run(lambda: __import__("os").getpid())
        victim = psutil.Process(next(iter(pids.values())))
        killed = threading.Event()

        def kill_after_first(done, total, row):
            if not killed.is_set():
                killed.set()
                victim.kill()  # its running tasks are rescheduled by Dask (or reported), never lost

        df = nbagent.batch([f"write k{i}" for i in range(8)], workspace=repo, approval="auto", client=cluster,
                           concurrency=4, progress=kill_after_first, **options)
    assert killed.is_set() and not victim.is_running()
    assert list(df["task"]) == list(range(8))
    for _, row in df.iterrows():  # every task is a row: finished, or failed with a reason
        assert row["files_changed"] == [f"k{row['task']}.txt"] or row["error"]
    assert df["error"].isna().sum() >= 7, df["error"].tolist()
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (repo / ".nbagent" / "batch" / df.attrs["batch_id"]).exists()


def test_the_workers_heaps_are_frozen_while_the_batch_runs(repo, model_options, cluster):
    """Each worker's collector leaves the objects from before the batch alone until it ends (batching.heap)."""
    import gc

    during = []

    def progress(done, total, row):
        during.append(cluster.run(gc.get_freeze_count))

    df = nbagent.batch([f"write h{i}" for i in range(3)], workspace=repo, approval="auto", client=cluster,
                       concurrency=2, progress=progress, **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    assert len(during) == 3 and all(len(counts) == 2 and min(counts.values()) > 1000 for counts in during)
    assert set(cluster.run(gc.get_freeze_count).values()) == {0}
