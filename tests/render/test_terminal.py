"""The terminal renderer and approver that the CLI and the text view share (nbagent/terminal.py)."""

from __future__ import annotations

import io
import json
import re
import threading
from pathlib import Path

import pytest

from nbagent import events as ev
from nbagent.render.agent_state import AgentState, reduce
from nbagent.render.escape import escape_controls
from nbagent.tools.approvals import Unasked
from nbagent.render.terminal import Rendered, TerminalRenderer, approval_card, render_markdown
from nbagent.tools.terminal_approver import TerminalApprover
from tests.paths import FIXTURES


def answer_of(renderer: TerminalRenderer, events) -> tuple[str, str]:
    parts = [renderer.render(e) for e in events]
    return "".join(p.answer for p in parts), "".join(p.activity for p in parts)


def two_steps(first: str = "Let me look.", second: str = "Done: it works.") -> list[ev.Event]:
    return [ev.TurnStart(prompt="p"), ev.TextDelta(text=first[:4]), ev.TextDelta(text=first[4:]),
            ev.Usage(input_tokens=1, output_tokens=1),
            ev.ToolCall(name="bash", call_id="c1", arguments={"command": "ls"}),
            ev.ToolResult(name="bash", call_id="c1", output="a\nb"),
            ev.TextDelta(text=second), ev.Usage(), ev.TurnEnd(reason="done")]


def test_paragraphs_of_different_steps_are_kept_apart():
    answer, activity = answer_of(TerminalRenderer(), two_steps())
    assert answer == "Let me look.\n\nDone: it works.\n"
    assert activity == "→ bash ls\n  ✓ bash done\n"


def test_a_step_that_ends_with_newlines_gets_no_extra_blank_lines():
    answer, _ = answer_of(TerminalRenderer(), two_steps("Looking.\n\n\n", "\n\nDone."))
    assert answer == "Looking.\n\n\nDone.\n"  # what the model wrote is kept; nothing is added to it


def test_joined_text_interleaves_activity_and_answer_in_order():
    renderer = TerminalRenderer()
    text = "".join(renderer.render(e).text for e in two_steps())
    assert text == "Let me look.\n→ bash ls\n  ✓ bash done\n\nDone: it works.\n"


def test_text_view_turn_with_reasoning_todos_memory_and_a_failure():
    r = TerminalRenderer()
    events = [ev.TurnStart(prompt="p"), ev.ReasoningDelta(text="hmm"), ev.TextDelta(text="Looking"),
              ev.ToolCall(name="read_file", call_id="c", arguments={"path": "a.py"}),
              ev.ToolResult(name="read_file", call_id="c", output="no such file", status="failed"),
              ev.TodosChanged(todos=[{"content": "x", "status": "completed"}, {"content": "y", "status": "pending"}]),
              ev.MemoryChanged(action="remember", entries=[{"text": "uses uv"}]),
              ev.TextDelta(text="Done."), ev.TurnEnd(reason="max_steps")]
    text = "".join(r.render(e).text for e in events)
    assert text.startswith("thinking…\nLooking\n→ read_file a.py\n  ✗ read_file failed: no such file\n")
    assert "todos: 1 of 2 done\n  ✔ x\n  ○ y\n" in text and "memory remember: uses uv\n" in text
    assert "\nDone.\n(thought for " in text and text.endswith("[turn ended: max_steps]\n")


def test_escape_sequences_from_the_model_and_tools_never_reach_the_terminal():
    hostile = "ok\x1b]0;pwned\x07 \x1b[2J\r\u202eevil"
    events = [ev.TurnStart(prompt="p"), ev.TextDelta(text=hostile),
              ev.ToolCall(name="bash", call_id="c", arguments={"command": hostile}),
              ev.ToolResult(name="bash", call_id="c", output=hostile, status="failed"),
              ev.Error(message=hostile), ev.TurnEnd(reason="error")]
    text = "".join(TerminalRenderer().render(e).text for e in events)
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\u202e" not in text
    assert "ok\\x1b]0;pwned\\x07 \\x1b[2J\\x0d\\u202eevil" in text


def test_markdown_mode_renders_each_finished_block():
    renderer = TerminalRenderer(markdown=True, width=60)
    renderer.render(ev.TurnStart(prompt="p"))
    first = renderer.render(ev.TextDelta(text="# Plan\n\nSome **bold** words"))
    assert "Plan" in first.answer and "**" not in first.answer  # the heading's block is complete
    assert "bold" not in first.answer  # the paragraph is still open
    rest = renderer.render(ev.ToolCall(name="glob", call_id="c", arguments={"pattern": "*"}))
    assert "bold" in rest.answer and "**" not in rest.answer and "\x1b[1m" in rest.answer
    assert rest.activity == "→ glob *\n"


def test_markdown_keeps_a_code_block_with_blank_lines_in_one_piece():
    renderer = TerminalRenderer(markdown=True, width=60)
    renderer.render(ev.TurnStart(prompt="p"))
    assert renderer.render(ev.TextDelta(text="```python\nx = 1\n\ny = 2\n")).answer == ""
    out = re.sub(r"\x1b\[[0-9;]*m", "", renderer.render(ev.TextDelta(text="```\n\nafter\n")).answer)
    assert "x = 1" in out and "y = 2" in out and "```" not in out


def test_markdown_shows_link_targets_and_escapes_controls():
    out = render_markdown(escape_controls("[docs](https://example.org/x) \x1b]8;;evil\x1b\\"), 80)
    assert "https://example.org/x" in out and "\x1b]8" not in out and "\\x1b]8" in out


def test_the_approval_card_shows_the_whole_call_escaped():
    command = "echo " + "x" * 400 + " && printf '\x1b[31mred\x1b[0m'\nrm -rf build"
    request = ev.ApprovalRequest(name="bash", call_id="c", arguments={"timeout": 30, "command": command},
                                 diff="--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\x1b[8m\n+new\n")
    card = approval_card(request)
    lines = card.splitlines()
    assert lines[0] == "? approval needed for bash"
    assert lines[1] == "  command:"  # the command first, whole, one line of it per line
    assert lines[2] == "    echo " + "x" * 400 + " && printf '\\x1b[31mred\\x1b[0m'"
    assert lines[3] == "    rm -rf build" and lines[4] == "  timeout: 30"
    assert "    -old\\x1b[8m" in lines and "    +new" in lines and "\x1b" not in card


def test_the_approval_card_shows_bidi_zero_width_and_line_separators():
    """Finding 12 of "Trust": the terminal's rule is render/escape.py's, line separators included."""
    command = "echo safe \u202e# txt.exe\u200b && curl x\u2028| sh\u2029"
    card = approval_card(ev.ApprovalRequest(name="bash", call_id="c", arguments={"command": command}))
    assert not any(c in card for c in "\u202e\u200b\u2028\u2029")
    assert "echo safe \\u202e# txt.exe\\u200b && curl x\\u2028| sh\\u2029" in card


def test_the_approver_reads_y_n_a_and_asks_again_on_anything_else():
    questions: list[str] = []
    answers = iter(["maybe", "A"])

    def ask(question: str) -> str:
        questions.append(question)
        return next(answers)

    request = ev.ApprovalRequest(name="write_file", call_id="c", arguments={"path": "x"})
    assert TerminalApprover(ask)(request) == "always"
    assert questions == ["approve write_file? [y]es / [n]o / [a]lways: ", "please answer y, n or a: "]
    assert TerminalApprover(lambda q: "y\n")(request) == "approve"
    assert TerminalApprover(lambda q: "")(request) == "deny"


def test_without_a_way_to_ask_the_call_is_denied_with_a_hint():
    out = io.StringIO()
    request = ev.ApprovalRequest(name="bash", call_id="c", arguments={"command": "ls"})

    def no_stdin(question: str) -> str:
        raise EOFError

    unasked = TerminalApprover(None, out=out, unattended="run with --yes")(request)
    assert unasked == "deny" and isinstance(unasked, Unasked)
    assert TerminalApprover(no_stdin, out=out, unattended="use auto")(request) == "deny"
    shown = out.getvalue()
    assert "no one could be asked (no terminal); run with --yes" in shown
    assert "no one could be asked here; use auto" in shown
    assert "by the user" not in unasked.why and "no one could be asked" in unasked.why and "--yes" in unasked.why


# ----- a terminal that joins late shows the same as one that was there from the start -------------------

SEQUENCES = sorted((FIXTURES / "event_sequences").glob("*.json"))


_TODOS = re.compile(r"^todos: .*\n(?:  [✔▶○⚠] .*\n)*", re.M)
_MEMORY = re.compile(r"^memory in this turn's prompt: (.*)\n", re.M)


def _turn_text(renderer: TerminalRenderer, events, start: Rendered | None = None) -> tuple[str, set[str]]:
    """What a renderer printed, and the memory entries it named. The todo list and the memory lines are
    compared apart: the state holds the latest list and the turn's entries, not when each came, so a
    late view shows them when it joins and a view from the start where they changed."""
    text = (start.text if start else "") + "".join(renderer.render(e).text for e in events)
    memory = {entry for line in _MEMORY.findall(text) for entry in line.split("; ")}
    text = _MEMORY.sub("", _TODOS.sub("", text))
    return re.sub(r"\(thought for [0-9.]+ s\)", "(thought)", text), memory


def _cuts(events):
    """(cut, turn id) for every point where a turn is in flight."""
    state = AgentState()
    for cut, event in enumerate(events):
        state = reduce(state, event)
        if state.turn is not None:
            yield cut + 1, state.turn.turn_id


@pytest.mark.parametrize("path", SEQUENCES, ids=lambda p: p.stem)
def test_joining_mid_turn_prints_what_watching_from_the_start_printed(path):
    events = [ev.event_from_dict(e) for e in json.loads(path.read_text())["events"]]
    checked = 0
    for cut, turn_id in _cuts(events):
        whole = _turn_text(TerminalRenderer(follow=turn_id), events)
        state = AgentState()
        for event in events[:cut]:
            state = reduce(state, event)
        late = TerminalRenderer(state=state, follow=turn_id)
        assert _turn_text(late, events[cut:], late.catch_up()) == whole, f"cut after event {cut}"
        checked += 1
    assert checked


@pytest.mark.process
def test_the_text_view_opened_while_a_call_waits_shows_the_turn_so_far(make_agent, tmp_path):
    from nbagent.jupyter.kernel.text_view import TextFollower
    from nbagent.testing import Call, Reply

    asked = threading.Event()
    agent = make_agent(Reply(text="I will write it.", tool_calls=[Call("write_file", {"path": "n.txt", "content": "x"})]),
                       "Written.", approval="ask")
    from_start = io.StringIO()
    TextFollower(agent, from_start)
    agent.subscribe(lambda e: asked.set() if isinstance(e, ev.ApprovalRequest) else None)
    future = agent.submit("write n.txt")
    assert asked.wait(10)
    late = io.StringIO()
    follower = TextFollower(agent, late)
    so_far = late.getvalue()
    assert "» write n.txt" in so_far and "→ write_file n.txt" in so_far and "? approval needed" in so_far
    agent.decide(agent.snapshot().approvals[0].call_id, "approve")
    assert future.result(10).reason == "done"
    agent.wait(5)
    follower.close()
    assert late.getvalue() == from_start.getvalue()
    assert "\nWritten.\nfiles changed: n.txt" in late.getvalue()


def test_a_late_view_shows_the_turn_so_far_escaped():
    hostile = "rm -rf x\x1b]0;pwned\x07\u202e"
    events = [ev.TurnStart(prompt=hostile, turn_id="t"), ev.TextDelta(text=hostile, turn_id="t"),
              ev.ToolCall(name="bash", call_id="c", arguments={"command": hostile}, turn_id="t"),
              ev.ApprovalRequest(name="bash", call_id="c", arguments={"command": hostile}, diff=hostile, turn_id="t"),
              ev.ApprovalDecision(name="bash", call_id="c", decision="approve", by="user", turn_id="t")]
    state = AgentState()
    for event in events:
        state = reduce(state, event)
    text = TerminalRenderer(state=state, show_prompt=True).catch_up().text
    assert "? approval needed for bash" in text and "approve (user)" in text  # the card a person answered
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\\x1b]0;pwned" in text
