"""%agent and %%agent through a real InteractiveShell: options, slash commands, --wait, the queue,
interrupts and the traitlets configuration."""

from __future__ import annotations

import _thread
import signal
import threading

import pytest
from IPython.utils.capture import capture_output

import nbagent.jupyter as nj
from nbagent.testing.replies import Call, Reply, Slow


def run(shell, cell: str):
    with capture_output() as out:
        result = shell.run_cell(cell)
    return result, out.stdout + out.stderr


def use(shell, make_agent, *replies, **options):
    agent = make_agent(*replies, **options)
    nj.use_agent(agent, shell)
    return agent


def test_help_is_the_docstring(shell):
    _, text = run(shell, "%agent?")
    assert "Ask the coding agent" in text and "--approval" in text


def test_bad_options_raise_usage_error_with_the_usage(shell):
    result, text = run(shell, "%agent --bogus do it")
    assert not result.success and "UsageError" in type(result.error_in_exec).__name__
    assert "unrecognized arguments: --bogus" in str(result.error_in_exec)
    assert "usage:" in str(result.error_in_exec) and "%agent [-c]" in str(result.error_in_exec)
    result, _ = run(shell, "%agent --approval sometimes do it")
    assert "invalid choice" in str(result.error_in_exec)
    result, _ = run(shell, "%agent -c -n do it")
    assert "only one of" in str(result.error_in_exec)


@pytest.mark.process
def test_wait_renders_the_turn_as_text_and_keeps_the_result(shell, make_agent):
    use(shell, make_agent, Reply(text="Let me look.", tool_calls=[Call("bash", {"command": "echo hi"})]),
        Reply(text="It says **hi**."))
    result, text = run(shell, "%agent --wait what's in here? it's -- odd")
    assert result.success, result.error_in_exec
    assert "Let me look.\n→ bash echo hi\n  ✓ bash done\n\nIt says **hi**.\n" in text
    last = nj.last_result(shell)
    assert last.reason == "done" and last.text.endswith("It says **hi**.")
    assert nj.current_agent(shell).session.messages[0]["content"] == "what's in here? it's -- odd"


@pytest.mark.process
def test_a_question_mark_at_the_end_is_a_prompt_not_help(shell, make_agent):
    agent = use(shell, make_agent, "Because.")
    result, text = run(shell, "%agent --wait why?")
    assert result.success and "Because." in text
    assert agent.session.messages[0]["content"] == "why?"


@pytest.mark.process
def test_cell_magic_body_is_the_prompt(shell, make_agent):
    agent = use(shell, make_agent, "Two lines read.")
    with capture_output():
        shell.run_cell_magic("agent", "--wait", "first line\nsecond line\n")
    assert agent.session.messages[0]["content"] == "first line\nsecond line"


@pytest.mark.process
def test_slash_commands(shell, make_agent):
    todos = [{"content": "a", "status": "completed"}, {"content": "b", "status": "blocked", "note": "why"}]
    agent = use(shell, make_agent, Reply(tool_calls=[Call("todo_write", {"todos": todos})]), "Planned.")
    run(shell, "%agent --wait plan it")
    first = agent.session_id
    assert "/resume ID" in run(shell, "%agent /help")[1]
    assert "todos: 1 of 2 done, 1 blocked" in run(shell, "%agent /todos")[1]
    assert "bash" in run(shell, "%agent /tools")[1]
    assert "model: scripted" in run(shell, "%agent /model")[1]
    assert "project memory is empty" in run(shell, "%agent /memory")[1]
    assert "no background tasks" in run(shell, "%agent /tasks")[1]
    assert "nothing to undo" in run(shell, "%agent /undo")[1]
    assert "kernel" in run(shell, "%agent /context")[0].result["name"].tolist()  # attached by default
    assert "cleared" in run(shell, "%agent /clear")[1] and agent.session_id == first
    result, _ = run(shell, "%agent /frobnicate")
    assert "unknown command /frobnicate" in str(result.error_in_exec)
    sessions, _ = run(shell, "%agent /sessions")
    assert first in list(sessions.result["id"])
    forked = run(shell, "%agent /fork")[1]
    assert f"forked {first} into" in forked and agent.session_id != first
    assert "new session" in run(shell, "%agent /new")[1] and agent.session.messages == []
    assert f"resumed session {first}" in run(shell, f"%agent /resume {first}")[1]
    assert agent.session_id == first and agent.session.messages[0]["content"] == "plan it"


@pytest.mark.process
def test_session_options_switch_sessions(shell, make_agent):
    agent = use(shell, make_agent, "one", "two", "three")
    run(shell, "%agent --wait first prompt")
    first = agent.session_id
    run(shell, "%agent -n --wait another")
    assert agent.session_id != first
    run(shell, f"%agent -r {first[:12]} --wait back again")
    assert agent.session_id == first and len(agent.session.messages) == 4


def test_options_reconfigure_the_live_agent_even_a_given_one(shell, make_agent):
    from nbagent.model.factory import DEFAULT_OPENAI_MODEL

    agent = use(shell, make_agent)
    _, text = run(shell, "%agent --model other-model")
    assert "model: other-model" in text and agent.session.model == "other-model"
    _, text = run(shell, "%agent --approval read-only")
    assert "approval: read-only" in text and nj.current_agent(shell) is agent
    assert agent.config.approval == "read-only" and agent.snapshot().settings["approval"] == "read-only"
    _, text = run(shell, "%agent --approval default --model default")  # back to the configuration's
    assert "approval: ask" in text and agent.config.approval == "ask"
    assert f"model: {DEFAULT_OPENAI_MODEL}" in text  # none configured, no endpoint: OpenAI's default


@pytest.mark.process
def test_background_turns_queue_and_drain_in_order(shell, make_agent, wait_for):
    shell.run_line_magic("config", "NbAgent.background = True")
    shell.run_line_magic("config", "NbAgent.view = 'widgets'")
    agent = use(shell, make_agent, Slow(0.02, Reply(text="first " * 20)), "second", "third")
    with capture_output():
        shell.run_cell("%agent one")
        shell.run_cell("%agent two")
        shell.run_cell("%agent three")
    magics = shell.magics_manager.registry["AgentMagics"]
    views = sorted(magics._views, key=lambda v: v.prompt)
    assert [v.prompt for v in views] == ["one", "three", "two"]
    assert agent.busy  # the cells returned while the first turn runs
    wait_for(lambda: views[1].state == "queued" or views[1].state == "running" or views[1].ended)
    assert agent.wait(30)
    for view in views:
        view.wait(5)
    texts = [m["content"] for m in agent.session.messages if m["role"] == "user"]
    assert texts == ["one", "two", "three"]
    assert all(v.state == "done" for v in views)
    run(shell, "%agent /clear")
    assert all(v.layout.display == "none" for v in views)


@pytest.fixture
def sigint_raises():
    """SIGINT raising KeyboardInterrupt, as in a kernel. A process started in the background by a
    script (``cmd &``, no job control) ignores SIGINT, Python then installs no handler for it, and
    ``_thread.interrupt_main()`` does nothing (the CI command run that way failed here)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.process
def test_interrupt_during_wait_aborts_the_turn_cleanly(shell, make_agent, wait_for, sigint_raises):
    agent = use(shell, make_agent, Slow(0.05, Reply(text="a very long answer " * 100)), "Still here.")
    started = threading.Event()
    agent.subscribe(lambda e: started.set() if e.type == "text_delta" else None)
    threading.Thread(target=lambda: started.wait(30) and _thread.interrupt_main(), daemon=True).start()
    result, text = run(shell, "%agent --wait talk for a while")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    assert "the turn was aborted" in text
    assert not agent.busy and nj.last_result(shell) is None or nj.last_result(shell).reason == "aborted"
    roles = [m["role"] for m in agent.session.messages]
    assert roles == ["user", "assistant"]  # what was said so far is kept, nothing half-made
    result, text = run(shell, "%agent --wait are you there?")
    assert result.success and "Still here." in text


@pytest.mark.process
def test_traitlets_configuration_feeds_the_agent(shell, workspace):
    from nbagent.testing.server import ScriptedServer

    with ScriptedServer(Reply(text="Hello from the server.")) as server:
        shell.run_line_magic("config", f"NbAgent.base_url = {server.url!r}")
        shell.run_line_magic("config", "NbAgent.api_key = 'sk-test'")
        shell.run_line_magic("config", "NbAgent.model = 'served-model'")
        shell.run_line_magic("config", "NbAgent.toolsets = ['core', 'todos']")
        shell.run_line_magic("config", "NbAgent.persist = False")
        result, text = run(shell, "%agent --wait hello")
        assert result.success, result.error_in_exec
        agent = nj.current_agent(shell)
        assert "Hello from the server." in text
        assert agent.config.model == "served-model" and agent.config.toolsets == ("core", "todos")
        assert agent.config.workspace == workspace.resolve()
        assert server.last.body["model"] == "served-model"
        assert agent.session.origin in (".", str(workspace.resolve()))
        session = agent.session_id
        _, text = run(shell, "%agent --approval read-only --toolsets core")
        assert "approval: read-only" in text and "toolsets: core" in text
        same = nj.current_agent(shell)
        assert same is agent and same.session_id == session and same.config.approval == "read-only"
        assert same.config.base_url == server.url  # the traitlets still apply


@pytest.mark.process
def test_reconfigure_keeps_the_session(shell, workspace, monkeypatch):
    from nbagent.testing.server import ScriptedServer

    with ScriptedServer(Reply(text="First."), Reply(text="Second.")) as server:
        shell.run_line_magic("config", f"NbAgent.base_url = {server.url!r}")
        shell.run_line_magic("config", "NbAgent.api_key = 'sk-test'")
        shell.run_line_magic("config", "NbAgent.model = 'served-model'")
        run(shell, "%agent --wait one")
        agent = nj.current_agent(shell)
        result, text = run(shell, "%agent --approval read-only --wait two")
        assert result.success and "approval: read-only" in text and "Second." in text
        assert nj.current_agent(shell) is agent
        assert [m["content"] for m in agent.session.messages] == ["one", "First.", "two", "Second."]


def test_no_model_configured_says_how_without_a_traceback(shell, monkeypatch):
    monkeypatch.setenv("NBAGENT_LOCAL", "off")
    result, text = run(shell, "%agent --wait hello")
    assert type(result.error_in_exec).__name__ == "UsageError"
    assert "OPENAI_API_KEY" in str(result.error_in_exec) and "Traceback" not in text


def test_a_base_url_without_a_model_is_told_in_the_magic_s_words(shell, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result, text = run(shell, "%agent --wait hello")
    assert type(result.error_in_exec).__name__ == "UsageError"
    assert str(result.error_in_exec) == ("no model name for http://127.0.0.1:9/v1: set NBAGENT_MODEL or pass "
                                         "%agent --model NAME")


def test_nbagent_workspace_names_the_kernel_s_workspace(shell, monkeypatch, tmp_path):
    """As for every front end (the notebooks' tests work in a scratch copy this way)."""
    monkeypatch.setenv("NBAGENT_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NBAGENT_MODEL", "scripted-model")
    result, text = run(shell, "%agent")
    assert result.success and f"workspace {tmp_path.resolve()}" in text
    nj.current_agent(shell).close()


@pytest.fixture(autouse=True)
def _no_config_leaks(shell):
    yield
    shell.config.pop("NbAgent", None)


@pytest.mark.process
def test_questions_in_a_longer_cell_are_prompts_too(shell, make_agent):
    agent = use(shell, make_agent, "Yes.", "No.")
    result, text = run(shell, "x = 1\n%agent --wait is it?\n%agent --wait and this?\nprint('after')")
    assert result.success and "Yes." in text and "No." in text and text.endswith("after\n")
    assert [m["content"] for m in agent.session.messages if m["role"] == "user"] == ["is it?", "and this?"]


@pytest.mark.process
def test_background_text_view_prints_as_the_turn_runs(shell, make_agent):
    shell.run_line_magic("config", "NbAgent.background = True")
    agent = use(shell, make_agent, Reply(text="Checking.", tool_calls=[Call("glob", {"pattern": "*.py"})]),
                "Nothing to see.")
    with capture_output() as out:
        result = shell.run_cell("%agent look around")
        assert result.success  # the cell returned; the turn goes on in the background
        assert agent.wait(30)
    assert "Checking.\n→ glob *.py\n  ✓ glob done\n\nNothing to see.\n" in out.stdout


@pytest.mark.process
def test_an_agent_cell_tells_the_model_which_cell_it_is(shell, make_agent):
    agent = use(shell, make_agent, "It is this cell.")
    shell.parent_header = {"metadata": {"cellId": "cell-7"}}  # what JupyterLab sends with each run
    try:
        with capture_output():
            shell.run_cell_magic("agent", "--wait", "explain the cell above\n")
    finally:
        del shell.parent_header
    sent = agent.session.messages[0]["content"]
    assert "this prompt was written in cell cell-7" in sent and sent.startswith("explain the cell above")


@pytest.mark.process
def test_the_widget_header_of_an_agent_cell_shows_its_question(shell, make_agent, monkeypatch):
    """Issue 40, item 6: each %%agent cell's header says what that cell asked, not the session's title
    (which every turn of the session shares)."""
    monkeypatch.setenv("NBAGENT_VIEW", "widgets")
    agent = make_agent("first answer", "second answer")
    agent.session.title = "Exploring the sales data"
    nj.use_agent(agent, shell)
    magics = shell.magics_manager.registry["AgentMagics"]
    shell.run_cell("%%agent --wait\nPlot revenue by month\nwith a log scale")
    first = magics.last_view.header.value
    shell.run_cell("%%agent --wait\nNow group by region")
    second = magics.last_view.header.value
    assert "<b>Plot revenue by month</b>" in first and "<b>Now group by region</b>" in second
    assert "<b>Exploring the sales data</b>" not in first + second
    assert "(Exploring the sales data)" in second  # the title stays, beside the session id


@pytest.mark.process
def test_a_failed_tool_row_says_why_on_its_own_line_in_widgets_and_text(shell, make_agent, monkeypatch):
    """Issue 40, item 7: the reason a call failed is on the row itself, not behind a bare ✗."""

    missing = Reply(tool_calls=[Call("read_file", {"path": "no_such_file.csv"})])
    agent = make_agent(missing, "It is missing.", missing, "Still missing.")
    nj.use_agent(agent, shell)
    monkeypatch.setenv("NBAGENT_VIEW", "widgets")
    shell.run_cell("%agent --wait read no_such_file.csv")
    view = shell.magics_manager.registry["AgentMagics"].last_view
    view.flush()
    rows = [w for w in _tree(view) if type(w).__name__ == "ToolRow"]
    assert len(rows) == 1 and rows[0].status == "failed"
    line = rows[0].line.value
    assert "✗ failed" in line and "nbagent-tool-reason" in line and "no_such_file.csv" in line.split("</code>", 1)[1]
    monkeypatch.setenv("NBAGENT_VIEW", "text")
    with capture_output() as out:
        shell.run_cell("%agent --wait again")
    failed = next(line for line in out.stdout.splitlines() if "read_file failed" in line)
    assert "no_such_file.csv" in failed.split("read_file failed", 1)[1]


def _tree(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _tree(child)
