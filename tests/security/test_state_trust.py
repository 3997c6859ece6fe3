"""Issue 26, the state directory is hostile input too: findings 2, 4, 7, 11, 13 (permissions) and 14.

Each test plants what a cloned repository (or another user of a shared machine) could plant, runs the
real thing (an Agent with a scripted model, the real checkpoint stores, a real git repository) and
checks that nothing outside the workspace changed and that the refusal says why.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from nbagent.attached.poller import Poller
from nbagent.checkpoints import CheckpointError
from nbagent.knowledge.repomap import RepoMap
from nbagent.store.db import workspace_db_path
from nbagent.testing.replies import Call, Reply
from nbagent.workspace.state_dir import STATE_DIR_ENV, StateDirRefused

OTHER_UID = 4242


def tree(folder: Path) -> dict[str, tuple[int, str]]:
    """Every entry under ``folder`` (links not followed): its mode and a hash of its content."""
    found = {}
    for dirpath, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(dirpath, name)
            info = os.lstat(path)
            data = path.read_bytes() if stat.S_ISREG(info.st_mode) else os.fsencode(os.readlink(path)) \
                if stat.S_ISLNK(info.st_mode) else b""
            found[str(path.relative_to(folder))] = (info.st_mode, hashlib.sha256(data).hexdigest())
    return found


def write_turn(*paths: str) -> tuple[Reply, str]:
    return Reply(tool_calls=[Call("write_file", {"path": p, "content": f"new {p}\n"}) for p in paths]), "Done."


def within(seconds: float, call):
    """``call()`` on a thread; the test fails (rather than hangs) if it has not returned in time."""
    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("value", call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked on a planted file"
    return box.get("value")


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me\n")
    os.utime(folder / "precious.txt", (1, 1))
    return folder


@pytest.fixture
def ws(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("old a\n")
    return folder


# ----- finding 2: links below a real .nbagent/ ----------------------------------------------------
@pytest.mark.parametrize("linked", ["checkpoints/copies/objects", "checkpoints/copies", "checkpoints",
                                    "checkpoints/sessions", "checkpoints/copies/pins"])
@pytest.mark.process
def test_a_link_below_the_state_directory_is_never_followed(make_agent, ws, outside, linked):
    state = ws / ".nbagent"
    (state / linked).parent.mkdir(parents=True, exist_ok=True)
    (state / linked).symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    agent = make_agent(*write_turn("a.txt"), workspace=ws, approval="auto")
    result = agent.run("edit a.txt")
    assert (ws / "a.txt").read_text() == "new a.txt\n"  # the turn itself ran
    assert any("symbolic link" in e for e in result.errors)  # and said why it has no checkpoint
    with pytest.raises((CheckpointError, StateDirRefused)):
        agent.undo()
    assert tree(outside) == before


@pytest.mark.process
def test_a_linked_journal_folder_is_not_written_through(make_agent, ws, outside):
    (ws / ".nbagent").mkdir()
    (ws / ".nbagent" / "journal").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    agent = make_agent(*write_turn("a.txt"), workspace=ws, approval="auto")
    agent.run("edit a.txt")
    agent.undo()  # the checkpoints are fine: only the journal is off
    assert tree(outside) == before and (ws / "a.txt").read_text() == "old a\n"


@pytest.mark.process
def test_the_checkpoints_git_folder_linked_to_another_repository_is_refused(make_agent, tmp_path, outside):
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "remote", "add", "origin", "https://example.org/x.git"], check=True)
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("old a\n")
    (ws / ".nbagent" / "checkpoints").mkdir(parents=True)
    (ws / ".nbagent" / "checkpoints" / "git").symlink_to(other / ".git", target_is_directory=True)
    before = tree(other / ".git")
    agent = make_agent(*write_turn("a.txt"), workspace=ws, approval="auto")
    result = agent.run("edit a.txt")
    assert any("symbolic link" in e for e in result.errors)
    assert tree(other / ".git") == before  # HEAD, config and remote untouched


@pytest.mark.process
def test_undo_through_a_state_directory_linked_after_the_turn_writes_nothing_there(make_agent, ws, tmp_path):
    agent = make_agent(*write_turn("a.txt"), workspace=ws, approval="auto")
    agent.run("edit a.txt")
    moved = tmp_path / "moved-state"
    (ws / ".nbagent").rename(moved)
    (ws / ".nbagent").symlink_to(moved, target_is_directory=True)
    before = tree(moved)
    with pytest.raises((CheckpointError, StateDirRefused), match="symbolic link"):
        agent.undo()
    assert tree(moved) == before and (ws / "a.txt").read_text() == "new a.txt\n"


@pytest.mark.process
def test_a_refused_restore_changes_nothing(make_agent, ws, outside):
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("old b\n")
    agent = make_agent(*write_turn("a.txt", "sub/b.txt"), workspace=ws, approval="auto")
    agent.run("edit two files")
    # After the turn, sub/ becomes a link out of the workspace: the undo is refused ...
    (ws / "sub" / "b.txt").unlink()
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    with pytest.raises(CheckpointError, match="outside the workspace"):
        agent.undo(force=True)
    # ... and a.txt, checked first in path order, was not restored either.
    assert (ws / "a.txt").read_text() == "new a.txt\n" and tree(outside) == before


# ----- finding 4: state created by another user ----------------------------------------------------
@pytest.mark.process
def test_a_shared_state_folder_made_by_another_user_is_refused(make_agent, ws, tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # a shared folder with the sticky bit, like /tmp
    monkeypatch.setenv(STATE_DIR_ENV, str(shared))
    path = workspace_db_path(ws)  # made by us first: fine
    mine = path.parent
    os.chown(mine, OTHER_UID, OTHER_UID)  # as if another user had made it first
    os.chmod(mine, 0o777)
    with pytest.raises(StateDirRefused, match="another user"):
        workspace_db_path(ws)
    agent = make_agent("fine", workspace=ws)
    result = agent.run("hello")
    assert result.text == "fine" and any("another user" in e for e in result.errors)


def test_a_database_made_by_another_user_is_refused(ws):
    path = workspace_db_path(ws)
    os.chown(path, OTHER_UID, OTHER_UID)
    os.chmod(path, 0o666)
    with pytest.raises(StateDirRefused, match="another user"):
        workspace_db_path(ws)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666  # refused, not taken over


def test_a_configured_folder_others_may_write_is_refused(ws, tmp_path, monkeypatch):
    shared = tmp_path / "open"
    shared.mkdir()
    os.chown(shared, OTHER_UID, OTHER_UID)
    os.chmod(shared, 0o777)  # no sticky bit: anyone could swap our folder in it
    monkeypatch.setenv(STATE_DIR_ENV, str(shared))
    with pytest.raises(StateDirRefused, match="writable by others|another user"):
        workspace_db_path(ws)
    assert list(shared.iterdir()) == []


@pytest.mark.process
def test_the_state_dir_setting_moves_all_of_the_state(make_agent, ws, tmp_path, monkeypatch):
    local = tmp_path / "local"
    monkeypatch.setenv(STATE_DIR_ENV, str(local))
    agent = make_agent(*write_turn("a.txt"), workspace=ws, approval="auto", telemetry=True)
    agent.run("edit a.txt")
    assert not (ws / ".nbagent").exists()
    (moved,) = local.iterdir()
    names = {p.name for p in moved.iterdir()}
    assert {"nbagent.db", "checkpoints", "journal", "traces.jsonl"} <= names
    agent.undo()
    assert (ws / "a.txt").read_text() == "old a\n"
    # A saved output lives there too, and read_file may page it (read only) through its shown path.
    from nbagent.tools.limits import limit_output
    from nbagent.workspace.root import Workspace

    workspace = Workspace(ws)
    cut = limit_output("line\n" * 5000, 200, workspace.state_subdir("outputs"), "bash", shown_root=ws)
    shown = cut.split("the whole output is in ")[1].split(" (page it")[0]
    assert workspace.resolve(shown).is_relative_to(moved)
    with pytest.raises(Exception, match="outside the workspace"):  # never written there
        workspace.resolve(shown, write=True)


# ----- finding 7: a planted repo-map cache -----------------------------------------------------------
@pytest.mark.process
def test_a_planted_repo_map_cache_reads_nothing_outside_and_never_blocks(ws, tmp_path):
    import orjson

    from nbagent.knowledge.repomap import CACHE_VERSION

    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    (secret_dir / "keys.py").write_text("def leaked_secret_function():\n    pass\n")
    os.mkfifo(ws / "pipe.py")
    (ws / "real.py").write_text("def real_function():\n    pass\n")
    listing = {"at": 10 ** 12, "dirs": [], "sig": [], "files": ["../secret/keys.py", "pipe.py"]}
    state = ws / ".nbagent"
    state.mkdir()
    (state / "repomap.json").write_bytes(orjson.dumps({"version": CACHE_VERSION, "files": {}, "listing": listing}))
    text = within(20, lambda: RepoMap(ws).block())
    assert "leaked_secret_function" not in text and "keys.py" not in text
    assert "real_function" in text  # an invalid cache is rebuilt from the workspace itself


@pytest.mark.process
def test_a_repo_map_cache_naming_a_link_out_is_not_followed(ws, tmp_path):
    import orjson

    from nbagent.knowledge.repomap import _dir_signature

    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "keys.py").write_text("def leaked_secret_function():\n    pass\n")
    (ws / "lib").symlink_to(tmp_path / "secret", target_is_directory=True)
    (ws / "real.py").write_text("def real_function():\n    pass\n")
    first = RepoMap(ws)
    first.block()
    assert "leaked_secret_function" not in first.block()
    data = first.cache_data()
    listing = data["listing"]  # edited to name the file behind the link, and to look fresh
    listing["files"].append("lib/keys.py")
    listing["dirs"] = sorted({*listing["dirs"], "lib"})
    listing["sig"] = _dir_signature(ws, listing["dirs"])
    data.pop("block", None)
    (ws / ".nbagent" / "repomap.json").write_bytes(orjson.dumps(data))
    assert "leaked_secret_function" not in RepoMap(ws).block()


# ----- finding 11: traces.jsonl as a FIFO -----------------------------------------------------------
@pytest.mark.process
def test_a_fifo_as_the_traces_file_does_not_hang_the_turn(make_agent, ws):
    (ws / ".nbagent").mkdir()
    os.mkfifo(ws / ".nbagent" / "traces.jsonl")
    agent = make_agent("fine", workspace=ws, telemetry=True)
    result = within(30, lambda: agent.run("hello"))
    assert result.text == "fine"


# ----- finding 13, the permission half: everything in the state directory is private ----------------
@pytest.mark.process
def test_every_file_in_the_state_directory_is_0600_and_every_folder_0700(make_agent, ws):
    (ws / "mod.py").write_text("def f():\n    pass\n")
    agent = make_agent(*write_turn("a.txt"), workspace=ws, approval="auto", telemetry=True)
    agent.run("edit a.txt")
    RepoMap(ws).block()
    poller = Poller(ws)  # the agent's own poller may hold the lock already: either way the file is made
    poller.try_lock()
    poller._release()
    state = ws / ".nbagent"
    assert {"journal", "checkpoints", "repomap.json", "context-poller.lock", "traces.jsonl"} <= \
        {p.name for p in state.iterdir()}
    for dirpath, dirs, files in os.walk(state):
        assert stat.S_IMODE(os.lstat(dirpath).st_mode) == 0o700, dirpath
        for name in files:
            mode = stat.S_IMODE(os.lstat(Path(dirpath, name)).st_mode)
            assert mode == 0o600, f"{dirpath}/{name} is {mode:o}"


# ----- finding 14: an unusable state directory ------------------------------------------------------
@pytest.mark.process
def test_no_task_folder_is_left_in_the_temp_folder(ws, tmp_path):
    (ws / ".nbagent").write_text("not a folder\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    script = textwrap.dedent(f"""
        from nbagent.tools.tasks import TaskManager
        from nbagent.workspace.root import Workspace
        manager = TaskManager.for_workspace(Workspace({str(ws)!r}))
        assert manager.dir.name.startswith("nbagent-tasks-"), manager.dir
    """)
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=60)
    assert list(temp.iterdir()) == []


@pytest.mark.process
def test_undo_without_a_usable_state_directory_says_why(make_agent, ws):
    (ws / ".nbagent").write_text("not a folder\n")
    agent = make_agent(*write_turn("a.txt"), workspace=ws, approval="auto")
    agent.run("edit a.txt")
    with pytest.raises(CheckpointError, match="nothing to undo: this workspace has no checkpoints"):
        agent.undo()
    assert (ws / ".nbagent").read_text() == "not a folder\n"
