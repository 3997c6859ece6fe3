"""Issue 26, finding 1: a command that the workspace's stored state names runs only after the user here
approved it, and that approval is recorded outside the workspace (nbagent.workspace.trust).

The attack: a repository commits ``.nbagent/nbagent.db`` holding an attached-context command source.
Opening an agent on the clone (even in read-only mode) ran it within one poller tick."""

from __future__ import annotations

import io
import os
import stat
import time

import pytest

from nbagent import Agent
from nbagent import events as ev
from nbagent.attached.store import ContextStore
from nbagent.cli.app import main
from nbagent.render.terminal import approval_card
from nbagent.store.db import Database, workspace_db_path
from nbagent.testing.scripted import ScriptedModel
from nbagent.workspace.trust import TrustFileRefused, is_trusted, trust, trust_path

PLANTED = "touch pwned; echo planted"


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "user-config"
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def clone(tmp_path, config_dir):
    """A workspace whose database came with the repository: a workspace command source nobody here approved."""
    ws = tmp_path / "clone"
    ws.mkdir()
    db = Database(workspace_db_path(ws))
    ContextStore(db).attach("gpu", "command", spec=PLANTED, every=0.05, why="planted by the repository")
    db.close()
    return ws


def _agent(ws, *replies, **options):
    options.setdefault("context_tick", 0.05)
    options.setdefault("context_min_every", 0.05)
    return Agent(workspace=ws, model=ScriptedModel(list(replies)), **options)


@pytest.mark.process
def test_a_cloned_command_source_does_not_run_in_read_only_mode(clone):
    with _agent(clone, "ok", approval="read-only") as agent:
        time.sleep(1.0)  # twenty poller ticks
        result = agent.run("hello")
        time.sleep(0.3)
        assert not (clone / "pwned").exists()
        assert not [e for e in result.events if isinstance(e, ev.ApprovalRequest)]  # read-only asks nothing
        (row,) = agent.context.sources().to_dict("records")
        assert row["status"] == "needs approval" and row["spec"] == PLANTED
    assert not is_trusted(clone, PLANTED)


@pytest.mark.process
def test_the_card_shows_the_whole_command_and_approving_records_it_outside_the_workspace(clone, config_dir):
    asked: list[ev.ApprovalRequest] = []
    with _agent(clone, "ok", "ok", approver=lambda r: asked.append(r) or "approve") as agent:
        time.sleep(0.3)
        assert not (clone / "pwned").exists()  # the poller waits for the approval
        result = agent.run("hello")
        (request,) = asked
        assert request.name == "context_command" and request.arguments["command"] == PLANTED
        assert request.arguments["source"] == "gpu" and "nbagent.db" in request.arguments["stored_in"]
        assert f"command: {PLANTED}" in approval_card(request)  # the terminal's card: the command in full
        (done,) = [e for e in result.events if isinstance(e, ev.ToolResult) and e.call_id == request.call_id]
        assert done.status == "done" and (clone / "pwned").exists()  # its first text was fetched at once
        agent.run("again")
        assert len(asked) == 1  # approved once, for good
    assert is_trusted(clone, PLANTED)
    record = trust_path()
    assert record.parent == config_dir and stat.S_IMODE(record.stat().st_mode) == 0o600
    assert str(clone.resolve()) in record.read_text()
    assert not any(p.name == record.name for p in clone.rglob("*"))  # nothing the repository could ship


@pytest.mark.process
def test_a_denied_command_stays_unrun_and_is_not_asked_again(clone):
    asked: list[ev.ApprovalRequest] = []
    with _agent(clone, "ok", "ok", approver=lambda r: asked.append(r) or "deny") as agent:
        first = agent.run("hello")
        agent.run("again")
        time.sleep(0.3)
        assert len(asked) == 1 and not (clone / "pwned").exists()
        (denied,) = [e for e in first.events if isinstance(e, ev.ToolResult) and e.name == "context_command"]
        assert denied.status == "denied"
        assert agent.context.sources()["status"].tolist() == ["needs approval"]


@pytest.mark.process
def test_approval_is_for_this_workspace_and_this_exact_command(clone, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    trust(other, PLANTED)  # approved for another workspace: not for this one
    trust(clone, PLANTED + " ")  # another command: not this one
    with _agent(clone, approval="read-only") as agent:
        time.sleep(0.5)
        assert not (clone / "pwned").exists()
        agent.context.approve("gpu")  # the explicit way, from Python
        assert (clone / "pwned").exists() and agent.context.sources()["status"].tolist() == ["ok"]


@pytest.mark.process
def test_a_command_the_user_attaches_is_approved_by_that_act_and_a_changed_one_is_not(tmp_path, config_dir):
    ws = tmp_path / "ws"
    ws.mkdir()
    with _agent(ws, context_poll=False) as agent:
        agent.context.attach("date", command="echo mine", workspace=True)
        assert agent.context.sources()["status"].tolist() == ["ok"]
    # The repository (or anyone who can write the database) changes the stored command afterwards.
    db = Database(workspace_db_path(ws))
    ContextStore(db).attach("date", "command", spec="echo changed; touch pwned")
    db.close()
    with _agent(ws, approval="read-only") as agent:
        time.sleep(0.5)
        assert not (ws / "pwned").exists() and agent.context.sources()["status"].tolist() == ["needs approval"]


@pytest.mark.process
def test_nbagent_context_approve_shows_the_command_and_asks(clone, capsys, monkeypatch):
    assert main(["context", "list", "-w", str(clone)]) == 0
    assert "needs approval" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["context", "approve", "gpu", "-w", str(clone)]) == 1
    err = capsys.readouterr().err
    assert f"command: {PLANTED}" in err and "not approved" in err and not (clone / "pwned").exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["context", "approve", "gpu", "-w", str(clone)]) == 0
    assert "approved gpu: planted" in capsys.readouterr().out and (clone / "pwned").exists()


def test_a_trust_record_others_can_write_or_a_link_is_not_believed(clone, config_dir, tmp_path):
    trust(clone, PLANTED)
    record = trust_path()
    os.chmod(record, 0o666)
    assert not is_trusted(clone, PLANTED)
    with pytest.raises(TrustFileRefused, match="writable by other users"):
        trust(clone, "echo more")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(record.read_text())
    record.unlink()
    record.symlink_to(elsewhere)
    assert not is_trusted(clone, PLANTED)
    with pytest.raises(TrustFileRefused):
        trust(clone, "echo more")
    assert "echo more" not in elsewhere.read_text()


@pytest.mark.process
def test_attaching_from_the_terminal_is_the_approval(tmp_path, config_dir, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["context", "-w", str(ws), "attach", "hello", "--command", "echo hi"]) == 0
    assert is_trusted(ws, "echo hi") and "attached hello: hi" in capsys.readouterr().out
    assert main(["context", "list", "-w", str(ws)]) == 0
    assert "needs approval" not in capsys.readouterr().out
