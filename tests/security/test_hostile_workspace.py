"""Every file, search, git and notebook tool against a hostile workspace: links out, a FIFO, a device,
a huge sparse file, names that are not UTF-8, a .git config that names commands, a .nbagent that is a
link. Each call ends (done, failed or denied, never hanging or crashing the turn), nothing outside the
workspace changes, and no repository command runs. Run through a real agent, as the model would."""

from __future__ import annotations

import os
import stat

import git
import pytest

from nbagent import events as ev
from nbagent.testing.replies import Call, Reply

pytestmark = pytest.mark.process

HOSTILE = ["out_dir", "out_dir/secret.txt", "out_file", "pipe", "device", "huge.bin", "caf\udce9.txt",
           ".nbagent/x", "ok.txt"]


@pytest.fixture
def hostile(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (ws / "out_dir").symlink_to(outside, target_is_directory=True)
    (ws / "out_file").symlink_to(outside / "secret.txt")
    os.mkfifo(ws / "pipe")
    try:
        os.mknod(ws / "device", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    except PermissionError:
        (ws / "device").symlink_to("/dev/null")
    with open(ws / "huge.bin", "wb") as f:
        f.truncate(300 << 20)  # 300 MiB, sparse: over the 256 MiB a tool reads whole
    with open(os.fsencode(ws) + b"/caf\xe9.txt", "wb") as f:
        f.write(b"caf\xe9 au lait\n")
    (ws / "ok.txt").write_text("fine\n")
    (ws / ".nbagent").symlink_to(outside, target_is_directory=True)
    repo = git.Repo.init(ws, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Ada").set_value("user", "email", "ada@example.org")
    repo.git.add("ok.txt")
    repo.index.commit("first")
    marker = tmp_path / "PWNED"
    (ws / ".gitattributes").write_text("* filter=evil diff=evil\n")
    with repo.config_writer() as cfg:
        cfg.set_value('filter "evil"', "clean", f"touch {marker}; cat")
        cfg.set_value('diff "evil"', "textconv", f"touch {marker}; cat")
        cfg.set_value("core", "fsmonitor", f"touch {marker}")
    repo.close()
    before = sorted((p.name, p.stat().st_size) for p in outside.iterdir())
    return ws, outside, marker, before


def _calls() -> list[Call]:
    calls = [Call("glob", {"pattern": "**/*"}), Call("grep", {"pattern": "secret"}), Call("list_dir", {"depth": 3}),
             Call("git_status"), Call("git_diff"), Call("git_log"), Call("git_show", {"ref": "HEAD"}),
             Call("read_many_files", {"paths": HOSTILE})]
    for path in HOSTILE:
        calls += [Call("read_file", {"path": path}), Call("grep", {"pattern": "x", "path": path}),
                  Call("list_dir", {"path": path}), Call("notebook_read", {"path": path}),
                  Call("git_blame", {"path": path}), Call("git_diff", {"path": path}),
                  Call("write_file", {"path": path, "content": "overwritten"}),
                  Call("edit_file", {"path": path, "old_string": "secret", "new_string": "gone"}),
                  Call("notebook_insert", {"path": path, "cell_type": "code", "source": "x"})]
    return calls


@pytest.mark.timeout(240)
@pytest.mark.parametrize("approval", ["ask", "auto"])
def test_every_tool_survives_a_hostile_workspace(hostile, make_agent, approval):
    ws, outside, marker, before = hostile
    calls = _calls()
    # In ask mode every change is previewed (the approval card) and denied; in auto mode it runs.
    agent = make_agent(*[Reply(tool_calls=[c]) for c in calls], "survived", workspace=ws, approval=approval,
                       max_steps=len(calls) + 5,
                       approver=lambda request: "deny")
    events = list(agent.stream("explore"))
    end = events[-1]
    assert isinstance(end, ev.TurnEnd) and end.reason == "done" and end.text == "survived"
    results = [e for e in events if isinstance(e, ev.ToolResult)]
    assert len(results) == len(calls)
    assert {r.status for r in results} <= {"done", "failed", "denied"}
    crashed = [r.output for r in results if "Traceback" in r.output or "Error:" in r.output.split("\n")[0]
               and not r.output.startswith(("ToolError", "GitCommandError"))]
    assert not [c for c in crashed if "AttributeError" in c or "TypeError" in c or "UnicodeEncodeError" in c]
    assert sorted((p.name, p.stat().st_size) for p in outside.iterdir()) == before
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert not marker.exists()
    outputs = "\n".join(r.output for r in results if r.status == "done")
    assert "secret\n" not in outputs.replace("No matches for 'secret'", "")
