"""Batches whose workers clone a git URL: one cached clone per machine, a checkout per task, nothing run
from the URL or the repository, sessions back in the user's workspace; on Dask and locally."""

from __future__ import annotations

import os

import pytest

import nbagent
from nbagent.batching.remote import check_url
from nbagent.errors import ConfigError
from nbagent.store.sessions import SessionStore

from .conftest import git


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("NBAGENT_CACHE_DIR", str(folder))
    return folder


def clones(cache) -> list[str]:
    return sorted(p.name for p in (cache / "clones").glob("*.git"))


@pytest.mark.parametrize("url", ["ext::sh -c touch% /tmp/x", "--upload-pack=touch /tmp/x", "fd::3",
                                 "ftp://example.com/r.git", "/just/a/path", "file:///a\nb", ""])
def test_urls_that_are_not_a_plain_transport_are_refused(url):
    with pytest.raises(ConfigError, match="git_url"):
        check_url(url)


@pytest.mark.parametrize("url", ["https://example.com/r.git", "ssh://git@example.com/r.git",
                                 "git@example.com:team/r.git", "file:///srv/r.git"])
def test_plain_transports_are_accepted(url):
    assert check_url(url) == url


@pytest.mark.process
def test_local_tasks_start_from_the_url_and_their_sessions_come_home(repo, model_options, cache, tmp_path,
                                                                     monkeypatch):
    marker = tmp_path / "ran"
    (repo / ".gitattributes").write_text("*.py filter=evil\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "attributes")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    user_config = tmp_path / "gitconfig"  # a filter in the worker's own config is not run on a task's files
    user_config.write_text(f"[filter \"evil\"]\n\tsmudge = touch {marker}; cat\n\tclean = touch {marker}; cat\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    home = tmp_path / "home"  # not a repository: the remote's HEAD is the revision
    home.mkdir()
    head = git(repo, "rev-parse", "HEAD").strip()
    df = nbagent.batch(["write one", "write two"], workspace=home, git_url=f"file://{repo}", approval="auto",
                       concurrency=2, progress=False, **model_options)
    assert df["error"].isna().all(), df["error"].tolist()
    assert list(df["files_changed"]) == [["one.txt"], ["two.txt"]]
    assert "+write two" in df.loc[1, "diff"]
    assert len(clones(cache)) == 1 and not marker.exists()
    assert not (cache / "clones" / "batch" / df.attrs["batch_id"]).exists()
    with SessionStore(home) as store:
        assert [store.messages(sid)[0]["message"]["content"] for sid in df["session_id"]] == ["write one",
                                                                                               "write two"]
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")  # (this test's own git would run the filter)
    assert git(repo, "rev-parse", "HEAD").strip() == head and git(repo, "status", "--porcelain") == ""
    assert sorted(p.name for p in home.iterdir()) == [".nbagent"]


@pytest.mark.process
def test_an_unpushed_commit_is_a_clear_row_per_task(repo, model_options, cache, tmp_path):
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(repo), str(checkout))
    (checkout / "local.txt").write_text("not pushed\n")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "local only")
    df = nbagent.batch(["write one"], workspace=checkout, git_url=f"file://{repo}", approval="auto",
                       progress=False, **model_options)
    assert "push it first" in df.loc[0, "error"]
    with pytest.raises(ConfigError, match="no branch or tag 'nope'"):
        nbagent.batch(["write one"], workspace=checkout, git_url=f"file://{repo}", revision="nope",
                      approval="auto", progress=False, **model_options)


@pytest.mark.process
@pytest.mark.integration
def test_dask_workers_clone_once_per_machine_and_check_out_a_subfolder(repo, model_options, cache, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    checkout = tmp_path / "checkout"  # the user's clone; the workers only ever see the URL
    git(tmp_path, "clone", "-q", str(repo), str(checkout))
    work = tmp_path / "elsewhere"
    work.mkdir()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                                  silence_logs=40, local_directory=str(work),
                                  env={"NBAGENT_CACHE_DIR": str(cache)}) as cluster, \
            distributed.Client(cluster) as client:
        cwds = client.run(os.getcwd)
        assert not any(cwd.startswith((str(repo), str(checkout))) for cwd in cwds.values())
        df = nbagent.batch([f"write s{i}" for i in range(6)], workspace=checkout / "src",
                           git_url=f"file://{repo}", approval="auto", client=client, concurrency=4,
                           progress=False, **model_options)
        worker_pids = set(client.run(os.getpid).values())
    assert df["error"].isna().all(), df["error"].tolist()
    assert list(df["files_changed"]) == [[f"src/s{i}.txt"] for i in range(6)]  # the workspace's subfolder
    assert set(df["pid"]) == worker_pids
    assert len(clones(cache)) == 1  # the two workers of this machine shared one clone
    assert not (cache / "clones" / "batch" / df.attrs["batch_id"]).exists()
    with SessionStore(checkout / "src") as store:
        assert len([sid for sid in df["session_id"] if store.messages(sid)]) == 6
    assert git(checkout, "status", "--porcelain") == ""


@pytest.mark.process
def test_a_workspace_folder_the_commit_lacks_is_a_clear_row(repo, model_options, cache, tmp_path):
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(repo), str(checkout))
    (checkout / "extra").mkdir()
    (checkout / "extra" / "new.py").write_text("x = 1\n")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "local folder")
    df = nbagent.batch(["write one"], workspace=checkout / "extra", git_url=f"file://{repo}", revision="main",
                       approval="auto", progress=False, **model_options)
    assert "has no folder extra" in df.loc[0, "error"]
