"""An agent's lifetime: a context manager, closed at interpreter exit, refusing prompts once closed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from nbagent.errors import AgentClosed


def test_a_closed_agent_refuses_new_prompts(make_agent):
    agent = make_agent("hi")
    agent.close()
    with pytest.raises(AgentClosed, match="closed"):
        agent.submit("again")
    with pytest.raises(AgentClosed):
        agent.run("again")
    agent.close()  # closing twice is fine


@pytest.mark.process
def test_the_agent_is_a_context_manager(make_agent):
    with make_agent("hi") as agent:
        assert agent.run("x").text == "hi"
    assert agent.closed


@pytest.mark.parametrize("body", [
    "print(agent.run('go').text)",
    "print(''.join(e.text for e in agent.stream('go') if e.type == 'text_delta'))",
    # an agent no name refers to, then the garbage collector: no "Task was destroyed but it is pending!"
    "del agent\nprint(Agent(workspace=here, model=ScriptedModel(['All done.'])).run('go').text)\n"
    "import gc; gc.collect()",
])
@pytest.mark.process
def test_scripts_exit_without_noise(tmp_path, body):
    script = textwrap.dedent(f"""
        from nbagent import Agent
        from nbagent.testing import ScriptedModel
        here = {str(tmp_path)!r}
        agent = Agent(workspace=here, model=ScriptedModel(["All done."]))
    """) + body + "\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "NBAGENT_LOCAL": "off"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "All done."
    assert out.stderr == "", out.stderr


def thread_name() -> str:
    """Say which thread runs this call."""
    import threading

    return threading.current_thread().name


@pytest.mark.process
def test_blocking_calls_run_on_the_process_pool_which_outlives_each_agent(make_agent):
    from nbagent.testing.replies import Call, Reply

    def script():
        return [Reply(tool_calls=[Call("thread_name", {})]), "done"]

    first = make_agent(*script(), tools=[thread_name], approval="auto")
    first.run("where")
    first.close()  # its loop closes: the shared pool must not shut down with it
    second = make_agent(*script(), tools=[thread_name], approval="auto")
    result = second.run("where")
    names = [c["output"] for c in result.tool_calls]
    assert len(names) == 1 and names[0].startswith("nbagent-worker"), names
