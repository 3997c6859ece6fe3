"""The text view (terminal IPython, nbconvert) shows the mode line like the other front ends: the approval
mode and whether the sandbox is on, before an agent's first text turn and again when the mode changed."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

import nbagent.jupyter as nj
from nbagent.tools.approvals import mode_line


def _run(shell, cell: str) -> str:
    with capture_output() as out:
        result = shell.run_cell(cell)
    assert result.success, result.error_in_exec
    return out.stdout


@pytest.mark.process
def test_the_text_view_shows_the_mode_line_first_and_when_it_changes(shell, make_agent):
    agent = make_agent("One.", "Two.", "Three.", approval="sandboxed")
    nj.use_agent(agent, shell)
    first = _run(shell, "%agent --wait one")
    assert first.startswith(f"[{mode_line('sandboxed')}]\n") and "One." in first
    assert "sandbox" in first.splitlines()[0]
    second = _run(shell, "%agent --wait two")
    assert "approval" not in second and "Two." in second  # unchanged: not repeated
    third = _run(shell, "%agent --wait --approval ask three")
    assert f"[{mode_line('ask')}]\nThree." in third  # after the option's own 'approval: ask'
