"""Undo and redo through the Agent: checkpoint events, the history note, the journal, the CLI."""

from __future__ import annotations

import pytest

from nbagent import Agent
from nbagent import events as ev
from nbagent.checkpoints import CheckpointConflict
from nbagent.cli.app import main as cli_main
from nbagent.checkpoints.journal import RecoveryJournal
from nbagent.checkpoints.turn_guard import forget_sessions
from nbagent.store.sessions import SessionStore
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

from .repos import files_of, git, user_view


@pytest.fixture
def agent_on(project):
    made = []

    def make(*replies, **kwargs):
        agent = Agent(model=ScriptedModel(replies), workspace=project, approval="auto", **kwargs)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


def edits():
    return Reply(tool_calls=[Call("write_file", {"path": "crlf.txt", "content": "rewritten\n"}),
                             Call("write_file", {"path": "made/new.py", "content": "x = 1\n"})])


@pytest.mark.process
def test_undo_and_redo_from_the_agent(project, agent_on):
    original, git_before = files_of(project), user_view(project)
    agent = agent_on(edits(), "Done.", Reply(tool_calls=[Call("read_file", {"path": "crlf.txt"})]), "Read.")
    result = agent.run("edit two files")
    marks = [e for e in result.events if isinstance(e, ev.Checkpoint)]
    assert len(marks) == 1
    mark = marks[0]
    assert (mark.action, mark.turn, mark.files, mark.undo_turn, mark.redo_turn) == \
        ("taken", 1, ["crlf.txt", "made/new.py"], 1, None)
    assert result.events.index(mark) < len(result.events) - 1  # before turn_end
    edited = files_of(project)
    read_only = agent.run("only read")
    assert not any(isinstance(e, ev.Checkpoint) for e in read_only.events)

    table = agent.checkpoints()
    assert list(table.columns[:3]) == ["turn", "time", "files changed"]
    assert table.iloc[0]["turn"] == 1 and table.iloc[0]["files changed"] == 2
    assert "+rewritten" in agent.diff(1)

    seen = []
    agent.subscribe(seen.append)
    restored = agent.undo()
    assert restored.turn == 1 and files_of(project) == original
    assert user_view(project) == git_before
    note = agent.session.messages[-1]
    assert note["role"] == "user" and "undid turn 1" in note["content"] and "crlf.txt" in note["content"]
    undone = [e for e in seen if isinstance(e, ev.Checkpoint)][-1]
    assert (undone.action, undone.undo_turn, undone.redo_turn) == ("undone", None, 1)

    agent.redo()
    assert files_of(project) == edited
    assert "redid turn 1" in agent.session.messages[-1]["content"]
    journal = RecoveryJournal(project / ".nbagent", agent.session_id, project)
    assert journal.path.is_file() and journal.unresolved() == []
    assert "rewritten" not in journal.path.read_text()  # hashes and paths, never contents


@pytest.mark.process
def test_undo_refuses_changed_files_and_cli_undo_redo(project, agent_on, capsys):
    agent = agent_on(edits(), "Done.")
    agent.run("edit")
    session_id = agent.session_id
    (project / "crlf.txt").write_text("the user typed this\n")
    with pytest.raises(CheckpointConflict, match="crlf.txt"):
        agent.undo()
    agent.close()
    assert cli_main(["undo", "-w", str(project)]) == 1
    assert "crlf.txt" in capsys.readouterr().err
    assert cli_main(["undo", "-w", str(project), "--force"]) == 0
    assert "undid turn 1" in capsys.readouterr().out
    assert (project / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert cli_main(["redo", "-w", str(project), "-s", session_id[:12]]) == 0
    assert (project / "made" / "new.py").read_text() == "x = 1\n"
    with SessionStore(project) as store:
        assert "redid turn 1" in store.load(session_id).messages[-1]["content"]
        forget_sessions(project, [store.delete(session_id)])  # the caller forgets the files, not the store
    assert not (project / ".nbagent" / "journal" / f"{session_id}.jsonl").exists()
    assert git(project, "for-each-ref", "refs/nbagent/") == ""


@pytest.mark.process
def test_resume_reports_files_changed_since_the_last_checkpoint(project, agent_on):
    agent = agent_on(edits(), "Done.")
    agent.run("edit")
    session_id = agent.session_id
    agent.close()
    (project / "made" / "new.py").write_text("changed while nobody watched\n")
    resumed = agent_on("Noted.", session=session_id)
    note = resumed.session.messages[-1]
    assert note["role"] == "user" and "made/new.py" in note["content"]
    result = resumed.run("go on")
    diverged = [e for e in result.events if isinstance(e, ev.Checkpoint) and e.action == "diverged"]
    assert diverged and diverged[0].files == ["made/new.py"]


def test_the_terminal_shows_the_files_a_turn_changed_with_escapes_shown_not_run():
    from nbagent.render.terminal import TerminalRenderer

    renderer = TerminalRenderer()
    renderer.render(ev.TurnStart(prompt="edit", turn_id="t2"))
    shown = renderer.render(ev.Checkpoint(action="taken", turn=2, files=["a.py", "evil\x1b[2J.txt"], turn_id="t2"))
    assert "files changed: a.py, evil" in shown.activity and "\x1b[2J" not in shown.activity
    assert "nbagent undo" in shown.activity


@pytest.mark.process
def test_purge_removes_the_journal_and_checkpoints_with_the_sessions(project, agent_on):
    import time

    agent = agent_on(edits(), "Done.")
    agent.run("edit")
    session_id = agent.session_id
    agent.close()
    journal = project / ".nbagent" / "journal" / f"{session_id}.jsonl"
    assert journal.exists() and git(project, "for-each-ref", "refs/nbagent/")
    time.sleep(0.01)
    with SessionStore(project) as store:
        gone = store.purge(days=0.001 / 86_400)
        assert session_id in gone
        assert journal.exists(), "the store deletes rows only: the journal is the caller's"
        forget_sessions(project, gone)
    assert not journal.exists()
    assert git(project, "for-each-ref", "refs/nbagent/") == ""
    assert not (project / ".nbagent" / "checkpoints" / "sessions" / f"{session_id}.json").exists()


def test_agent_state_marks_the_turn_and_reports_divergence():
    from nbagent.render.agent_state import AgentState, reduce

    s = reduce(AgentState(), ev.TurnStart(prompt="edit", turn_id="t1"))
    s = reduce(s, ev.Checkpoint(action="taken", turn=1, files=["a.py"], undo_turn=1, turn_id="t1"))
    s = reduce(s, ev.TurnEnd(reason="done", turn_id="t1"))
    s = reduce(s, ev.Checkpoint(action="undone", turn=1, files=["a.py"], redo_turn=1, turn_id="t1"))
    assert s.transcript[0].checkpoint is not None and s.transcript[0].checkpoint.undone
    assert (s.undo_turn, s.redo_turn) == (None, 1)
    s = reduce(s, ev.Checkpoint(action="diverged", files=["b.py"]))
    assert "changed since the last checkpoint: b.py" in s.notices[-1].text


def test_the_undo_command_shows_hostile_file_names_escaped():
    from nbagent.cli.checkpoints import _printable

    assert _printable("evil\x1b[2J\u202etxt.py\n") == "evil\\x1b[2J\\u202etxt.py\\n"


@pytest.mark.process
def test_an_agent_without_a_recovery_journal_writes_none(project, agent_on):
    agent = agent_on(edits(), "Done.", recovery_journal=False)
    assert agent.run("edit two files").text == "Done."
    journal = RecoveryJournal(project / ".nbagent", agent.session_id, project)
    assert not journal.path.exists()
    assert (project / "made" / "new.py").read_text() == "x = 1\n"
