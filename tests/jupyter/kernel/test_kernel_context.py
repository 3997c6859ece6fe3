"""What the kernel already knows: %agent attaches the kernel's recent history (cells, last traceback)."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

import nbagent.jupyter as nj
from nbagent.testing.replies import Reply


def run(shell, cell: str):
    """Run a cell as a kernel does: numbered, in In/Out."""
    with capture_output() as out:
        result = shell.run_cell(cell, store_history=True)
    return result, out.stdout + out.stderr


def use(shell, make_agent, *replies, **options):
    agent = make_agent(*replies, **options)
    nj.use_agent(agent, shell)
    return agent


@pytest.mark.process
def test_agent_fix_it_gets_the_traceback_in_its_first_request_without_a_tool_call(shell, make_agent):
    agent = use(shell, make_agent, Reply(text="Divide by a non-zero b."), context_poll=False)
    run(shell, "def ratio(a, b):\n    return a / b\n")
    run(shell, "total = 41 + 1\ntotal")
    failed, _ = run(shell, "ratio(total, 0)")
    assert not failed.success
    result, text = run(shell, "%agent --wait fix it")
    assert result.success, result.error_in_exec
    first = agent.runtime.model.requests[0]
    assert [m["role"] for m in first.messages] == ["system", "user"]
    note = first.messages[0]["content"]
    assert "ZeroDivisionError" in note and "return a / b" in note and "ratio(total, 0)" in note
    assert "Out[2]: 42" in note and "%agent --wait" not in note
    assert "Summary: error in In [3]: ZeroDivisionError: division by zero" in note
    assert "context: kernel attached: error in In [3]" in text  # visibly: the view shows the note
    # Seen once: the next prompt carries no second copy unless the kernel's history changed.
    agent.runtime.model.enqueue("ok")
    run(shell, "%agent --wait and now?")
    assert sum(m["role"] == "system" for m in agent.runtime.model.requests[1].messages) == 1


@pytest.mark.process
def test_kernel_history_can_be_removed_and_stays_declined(shell, make_agent):
    agent = use(shell, make_agent, "one", "two", context_poll=False)
    run(shell, "x = 1")
    run(shell, "%agent --wait hi")
    assert "removed kernel" in run(shell, "%agent /context remove kernel")[1]
    run(shell, "y = 2")
    run(shell, "%agent --wait again")
    assert agent.context.store.get("kernel", agent.session_id) is None
    second = agent.runtime.model.requests[1]
    assert "was removed" in second.messages[-2]["content"]


def test_context_slash_command_and_variable_sources(shell, make_agent):
    from nbagent.jupyter.kernel.bridge import bridge_from_shell

    agent = use(shell, make_agent, "seen", context_poll=False, kernel=bridge_from_shell(shell))
    run(shell, "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})")
    said = run(shell, "%agent /context attach frame --variable df --why 'the data'")[1]
    assert "attached frame (variable)" in said
    run(shell, "df['b'] = df['a'] * 2")  # after each cell the variable's summary is refreshed
    source = agent.context.store.get("frame", agent.session_id)
    assert source.snapshot.serial == 2 and "b" in source.snapshot.text
    listing, _ = run(shell, "%agent /context")
    assert "frame" in list(listing.result["name"])
    assert "muted frame" in run(shell, "%agent /context mute frame")[1]
    bad, _ = run(shell, "%agent /context attach")
    assert "UsageError" in type(bad.error_in_exec).__name__


@pytest.mark.process
def test_context_approve_runs_a_stored_command_source_after_showing_it(shell, make_agent, tmp_path):
    """Issue 26, finding 1: a command source that came with the workspace's database waits for approval."""
    from nbagent.attached.store import ContextStore
    from nbagent.store.db import Database, workspace_db_path

    db = Database(workspace_db_path(tmp_path))
    ContextStore(db).attach("gpu", "command", spec="touch ran; echo 'gpu\x1b[31m ok'")
    db.close()
    agent = use(shell, make_agent, context_poll=False, approval="read-only")
    listing, _ = run(shell, "%agent /context")
    statuses = dict(zip(listing.result["name"], listing.result["status"]))
    assert statuses["gpu"] == "needs approval" and not (tmp_path / "ran").exists()
    said = run(shell, "%agent /context approve gpu")[1]
    assert "approved gpu for this workspace: \"touch ran; echo 'gpu\\u001b[31m ok'\" (ok)" in said
    frame = agent.context.sources()
    assert (tmp_path / "ran").exists() and frame[frame["name"] == "gpu"]["status"].tolist() == ["ok"]


def test_a_stored_variable_source_reaches_only_the_users_variables(shell, make_agent, tmp_path):
    """Issue 26, finding 6 through stored state: a planted variable source naming the kernel's key."""
    from nbagent.attached.store import ContextStore
    from nbagent.jupyter.kernel.bridge import bridge_from_shell
    from nbagent.store.db import Database, workspace_db_path

    db = Database(workspace_db_path(tmp_path))
    ContextStore(db).attach("key", "variable", spec="exit._ip.config")
    db.close()
    agent = use(shell, make_agent, context_poll=False, kernel=bridge_from_shell(shell))
    run(shell, "x = 1")  # after each cell the variable sources are refreshed
    source = agent.context.store.get("key", agent.session_id)
    assert source.snapshot.text is None and "the kernel's own name" in source.snapshot.error


@pytest.mark.process
def test_a_queued_prompt_gets_the_kernels_history_as_it_was_when_given(shell, make_agent, wait_for):
    """Issue 40, item 9: a turn that starts later than its prompt was given (here queued behind a slow
    turn) does not see a cell run in between; the next prompt does."""
    from nbagent.testing.replies import Stall

    agent = use(shell, make_agent, Stall(seconds=3, reply=Reply(text="first")), "second", "third",
                context_poll=False)
    shell.run_line_magic("config", "NbAgent.background = True")  # as in a kernel: %agent returns at once
    run(shell, "before_prompts = 1")
    run(shell, "%agent first question")
    wait_for(lambda: agent.busy and agent.runtime.model.requests)  # turn one is in its model call
    run(shell, "%agent second question")
    run(shell, "ran_in_between = 2")
    assert agent.wait(60)
    seen = ["\n".join(str(m.get("content")) for m in r.messages) for r in agent.runtime.model.requests]
    assert "before_prompts = 1" in seen[0] and "before_prompts = 1" in seen[1]
    assert "ran_in_between" not in seen[1], "a cell run after the prompt was given reached its turn"
    run(shell, "%agent third question")
    assert agent.wait(60)
    assert "ran_in_between = 2" in "\n".join(str(m.get("content")) for m in agent.runtime.model.requests[2].messages)


@pytest.mark.process
def test_the_small_profile_gets_the_words_typed_and_no_context_it_cannot_use(shell, make_agent):
    """Issue 40, item 3: the offline model's profile sends neither the kernel's history (which a toy model
    repeats back) nor the open-notebook block; the prompt is what the user typed."""
    agent = use(shell, make_agent, "Hello.", context_poll=False, profile="small")
    run(shell, "total = 41 + 1\ntotal")
    run(shell, "%agent --wait say hello")
    messages = agent.runtime.model.requests[0].messages
    sent = "\n".join(str(m.get("content")) for m in messages)
    assert [m["role"] for m in messages] == ["user"] and messages[-1]["content"] == "say hello"
    assert "Kernel history" not in sent and "total = 41" not in sent and "<open_in_jupyter>" not in sent
