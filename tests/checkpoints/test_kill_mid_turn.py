"""SIGKILL during a turn that edits files: on resume the journal and checkpoints are consistent,
nothing is redone blindly, and /undo still restores the state before the turn."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from nbagent import Agent
from nbagent.checkpoints.journal import RecoveryJournal
from nbagent.testing.scripted import ScriptedModel

from nbagent.workspace.tempfiles import SUFFIX

from tests.killable import KillableChild

from .repos import files_of as all_files_of, make_project, user_view

pytestmark = pytest.mark.process


def files_of(root: Path) -> dict[str, bytes]:
    """The project's files, without the temporary file of a write the kill cut (the sweep removes it)."""
    return {k: v for k, v in all_files_of(root).items() if not k.endswith(SUFFIX)}

CHILD = Path(__file__).with_name("kill_child.py")
STEPS = 12
ROUNDS = 5


def run_and_kill(workspace: Path, kill_after: int) -> str | None:
    """Run the child's editing turn and SIGKILL it after its ``kill_after``-th tool result (0: once ready)."""
    def reached(words: list[str]) -> bool:
        return ((words[0] == "ready" and kill_after == 0) or words[0] == "finished"
                or (words[0] == "result" and int(words[1]) >= kill_after))

    child = KillableChild([sys.executable, str(CHILD), str(workspace), str(STEPS)], until=reached)
    assert child.reached.wait(60), "the child never reached the kill point"
    child.kill()
    return child.first("ready")


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_sigkill_during_an_editing_turn(tmp_path):
    rng = random.Random()
    for round_ in range(ROUNDS):
        project = make_project(tmp_path / f"p{round_}")
        original, git_before = files_of(project), user_view(project)
        session_id = run_and_kill(project, rng.randrange(0, STEPS * 4 // 3))
        assert session_id is not None
        journal = RecoveryJournal(project / ".nbagent", session_id, project)
        unresolved = journal.unresolved()
        assert all(e.state in ("pending", "committed", "failed") for e in unresolved)
        assert all(e.tool == "write_file" and e.path for e in unresolved)
        left = files_of(project)

        agent = Agent(model=ScriptedModel(["I checked the files first."]), workspace=project,
                      session=session_id, approval="auto")
        try:
            notes = [m["content"] for m in agent.session.messages if m.get("note") == "recovery"]
            for entry in unresolved:  # each one told, none repeated
                assert notes and entry.call_id in notes[-1]
                if entry.state == "committed":
                    assert "do not repeat" in notes[-1]
                else:
                    assert "Verify the current state" in notes[-1]
            agent.run("go on")
            assert files_of(project) == left, "resume changed files: a blind redo"
            assert journal.unresolved() == []
            if agent.checkpoints().empty:
                assert left == original  # killed before its first change was made
            else:
                agent.undo()
            assert files_of(project) == original
            assert user_view(project) == git_before
        finally:
            agent.close()
