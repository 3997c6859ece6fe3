"""Refreshing polled sources with real processes and files: timeouts, output caps, hostile paths."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from nbagent.attached.fetch import read_watched, refresh, run_command
from nbagent.attached.records import Source, SourceError
from nbagent.workspace.root import Workspace
from nbagent.workspace.trust import trust


@pytest.mark.process
def test_a_command_over_its_time_is_killed_with_its_whole_group(tmp_path):
    started = time.monotonic()
    with pytest.raises(SourceError, match="over its 0.5 s limit"):
        run_command("sleep 30 & echo $! > child.pid; wait", tmp_path, timeout=0.5, cap=1000)
    assert time.monotonic() - started < 10
    child = int((tmp_path / "child.pid").read_text())
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


@pytest.mark.process
def test_output_over_the_cap_is_refused_and_the_command_killed(tmp_path):
    with pytest.raises(SourceError, match="over 1 KiB"):
        run_command("yes hello", tmp_path, timeout=20, cap=1024)


@pytest.mark.process
def test_a_failing_command_reports_its_exit_and_last_lines(tmp_path):
    command = "echo first; echo boom >&2; exit 3"
    trust(tmp_path, command)  # the user's own source: approved when attached
    fetched = refresh(Source(name="x", kind="command", spec=command), Workspace(tmp_path))
    assert fetched.output is None and fetched.error == "exit 3: first | boom"


@pytest.mark.process
def test_a_command_not_approved_for_this_workspace_is_not_run(tmp_path):
    command = "touch ran"
    fetched = refresh(Source(name="x", kind="command", spec=command), Workspace(tmp_path))
    assert fetched.needs_approval and fetched.output is None and not (tmp_path / "ran").exists()
    trust(tmp_path, command)
    assert refresh(Source(name="x", kind="command", spec=command + " "), Workspace(tmp_path)).needs_approval
    assert refresh(Source(name="x", kind="command", spec=command), Workspace(tmp_path)).error == \
        "the source's output is empty"
    assert (tmp_path / "ran").exists()


def test_watched_files_must_be_regular_files_inside_the_workspace(tmp_path):
    ws = Workspace(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(SourceError, match="not a regular file"):
        read_watched("pipe", ws)
    outside = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    outside.write_text("secret")
    (tmp_path / "link").symlink_to(outside)
    fetched = refresh(Source(name="l", kind="file", spec="link"), ws)
    assert fetched.output is None and "outside the workspace" in fetched.error
    (tmp_path / "big.log").write_bytes(b"x" * 70_000 + b"\nlast line\n")
    assert read_watched("big.log", ws).endswith("last line\n")
