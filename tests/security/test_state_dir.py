"""Findings 2, 8 and 10: the .nbagent state directory is never a link, is private, falls back to memory."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nbagent.tools.limits import KEEP_SAVED, limit_output
from nbagent.workspace.state_dir import StateDirRefused
from nbagent.store.db import workspace_db_path
from nbagent.tools.tasks import TaskManager
from nbagent.workspace.root import Workspace


@pytest.fixture
def victim(tmp_path):
    """A folder outside the workspace holding files named like nbagent's outputs and task logs."""
    folder = tmp_path / "victim"
    folder.mkdir()
    names = ["report-1.txt", "a-b.txt", "t1.log", "tabc.log", "t123456.log", "notes.json"]
    for name in names:
        (folder / name).write_text("precious\n")
        os.utime(folder / name, (1, 1))  # very old: any age-based sweep would take them
    return folder, names


@pytest.mark.process
@pytest.mark.parametrize("kind", ["link", "file"])
def test_a_state_dir_that_is_not_a_real_directory_is_refused(tmp_path, victim, make_agent, kind):
    folder, names = victim
    ws = tmp_path / "ws"
    ws.mkdir()
    if kind == "link":
        (ws / ".nbagent").symlink_to(folder, target_is_directory=True)
    else:
        (ws / ".nbagent").write_text("not a directory\n")
    with pytest.raises(StateDirRefused, match="symbolic link|not a directory"):
        workspace_db_path(ws)
    with pytest.raises(StateDirRefused):
        Workspace(ws).state_dir
    agent = make_agent("fine", workspace=ws)
    result = agent.run("hello")
    assert result.text == "fine"
    assert any(".nbagent" in m for m in result.errors)  # one clear message, and the turn ran in memory
    TaskManager.for_workspace(Workspace(ws))  # tasks go elsewhere, nothing is swept in the target
    limit_output("x" * 100, 10, Workspace(ws).state_subdir("outputs"))
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)
    if kind == "file":
        assert (ws / ".nbagent").read_text() == "not a directory\n"


def test_pruning_and_sweeping_touch_only_names_nbagent_made(tmp_path):
    out = tmp_path / "outputs"
    out.mkdir()
    for name in ["report-1.txt", "my-notes.txt", "a-b-c.txt"]:
        (out / name).write_text("user file\n")
    for _ in range(KEEP_SAVED + 3):
        limit_output("y" * 50, 10, out, "bash")
    assert {"report-1.txt", "my-notes.txt", "a-b-c.txt"} <= {p.name for p in out.iterdir()}
    assert len(list(out.glob("bash-*.txt"))) == KEEP_SAVED

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ["tabc.log", "t1.log", "tgz0000.log", "t123456.log"]:  # the last one is a real task id
        (tasks / name).write_text("log\n")
        os.utime(tasks / name, (1, 1))
    TaskManager(tasks, tmp_path)
    assert sorted(p.name for p in tasks.iterdir()) == ["t1.log", "tabc.log", "tgz0000.log"]


def test_state_dir_database_and_logs_are_private(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / ".nbagent").mkdir(mode=0o755)  # as an older nbagent made it
    os.chmod(tmp_path / ".nbagent", 0o755)
    db = workspace_db_path(tmp_path)
    assert stat.S_IMODE(os.stat(tmp_path / ".nbagent").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600
    manager = TaskManager(ws.state_subdir("tasks"), tmp_path)
    task_id = manager.reserve()
    assert stat.S_IMODE(os.stat(manager.log_path(task_id)).st_mode) == 0o600
    text = limit_output("z" * 100, 10, ws.state_subdir("outputs"))
    saved = next((tmp_path / ".nbagent" / "outputs").iterdir())
    assert "outputs/" in text and stat.S_IMODE(os.stat(saved).st_mode) == 0o600


def test_a_link_planted_inside_the_state_dir_is_refused(tmp_path, victim):
    folder, names = victim
    (tmp_path / ".nbagent").mkdir()
    (tmp_path / ".nbagent" / "outputs").symlink_to(folder, target_is_directory=True)
    assert Workspace(tmp_path).state_subdir("outputs") is None
    (tmp_path / ".nbagent" / "nbagent.db").symlink_to(folder / "notes.json")
    with pytest.raises(StateDirRefused):
        workspace_db_path(tmp_path)
    assert (folder / "notes.json").read_text() == "precious\n"


READ_ONLY_SCRIPT = textwrap.dedent("""
    import sys
    from nbagent import Agent
    from nbagent.testing import ScriptedModel, Reply, Call
    model = ScriptedModel([Reply(tool_calls=[Call("bash", {"command": "seq 1 5000"})]), "answered"])
    agent = Agent(model=model, workspace=sys.argv[1], output_limit=2000, approval="auto")
    result = agent.run("hi")
    print("TEXT", result.text)
    print("ERRORS", len(result.errors), result.errors[0] if result.errors else "")
    print("TOOL", result.tool_calls[0]["status"], "cut from the middle" in result.tool_calls[0]["output"])
    agent.close()
""")


def _read_only_argv(ws: Path) -> list[str]:
    """Run the script with ``ws`` read-only: a read-only bind mount in a private mount namespace
    when we are root (permissions do not stop root), else plain permissions."""
    argv = [sys.executable, "-c", READ_ONLY_SCRIPT, str(ws)]
    if os.getuid() != 0:
        os.chmod(ws, 0o555)
        return argv
    if not shutil.which("unshare"):
        pytest.skip("running as root without unshare: no way to make a read-only workspace")
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind -o ro "$1" "$1" && shift && exec "$@"', "_", str(ws), *argv]


@pytest.mark.process
def test_a_read_only_workspace_falls_back_to_memory_with_one_message(tmp_path):
    ws = tmp_path / "ro"
    ws.mkdir()
    (ws / "data.txt").write_text("x\n")
    try:
        out = subprocess.run(_read_only_argv(ws), capture_output=True, text=True, timeout=60, cwd="/")
    finally:
        os.chmod(ws, 0o755)
    made_state_dir = (ws / ".nbagent").exists()
    assert out.returncode == 0, out.stderr
    assert "TEXT answered" in out.stdout
    assert "ERRORS 1 " in out.stdout and ".nbagent" in out.stdout
    assert "TOOL done True" in out.stdout
    assert not made_state_dir
