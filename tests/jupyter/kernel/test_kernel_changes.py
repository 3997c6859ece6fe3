"""What the agent's kernel_run does to a real ipykernel's namespace is recorded, shown and taken back.

One real kernel (ipykernel through jupyter_client) runs an agent on a ScriptedModel whose kernel_run
changes the user's variables; the cells print what the test checks as JSON.
"""

from __future__ import annotations

import json

import pytest
from jupyter_client.manager import start_new_kernel

from .real_kernel import run

pytestmark = pytest.mark.integration

SETUP = """
import json
import numpy as np
import pandas as pd
from nbagent import Agent
from nbagent.jupyter.kernel.bridge import bridge_from_shell
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel

def make_agent(code, **options):
    model = ScriptedModel([Reply(tool_calls=[Call("kernel_run", {{"code": code}})]), Reply(text="done")])
    # A generous fingerprint budget: on a loaded machine the default 15 ms may leave a name "not checked".
    return Agent(workspace={workspace!r}, model=model, approval="auto", kernel_run_auto=True, memory=False,
                 kernel=bridge_from_shell(get_ipython()), kernel_fingerprint_ms=2000, **options)

def changes(result):
    return [e.to_dict() for e in result.events if e.type == "kernel_changed"]
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("kernel_changes")
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(workspace))
    kc.execute_interactive(SETUP.format(workspace=str(workspace)), timeout=60, store_history=True)
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def last_json(text: str):
    return json.loads(text.strip().splitlines()[-1])


@pytest.mark.kernel
def test_a_dataframe_changed_in_place_is_reported_with_what_was_added_rebound_and_deleted(kernel):
    run(kernel, "df = pd.DataFrame({'a': range(100_000), 'b': 1.5})\nx = 1\ntmp = 'scratch'")
    printed = run(kernel, "agent = make_agent(\"df['b'] *= 2\\nx = 2\\ndel tmp\\ndf_clean = df.dropna()\")\n"
                          "result = agent.run('clean the frame')\n"
                          "print(json.dumps(changes(result)))\n"
                          "print(json.dumps(agent.kernel_changes().to_dict('records')))")
    events, rows = [json.loads(line) for line in printed.strip().splitlines()[-2:]]
    assert len(events) == 1
    change = events[0]
    assert change["mutated"] == ["df"]  # same object, changed in place: its sampled fingerprint differs
    assert (change["added"], change["rebound"], change["deleted"]) == (["df_clean"], ["x"], ["tmp"])
    assert {(r["name"], r["change"], r["restorable"]) for r in rows} == {
        ("df_clean", "added", True), ("x", "rebound", True), ("tmp", "deleted", True), ("df", "mutated", False)}
    run(kernel, "agent.close()")


def test_undo_binds_the_old_object_again_and_redo_the_agents(kernel):
    run(kernel, "data = [1, 2, 3]\noriginal = data")
    run(kernel, "agent = make_agent(\"data = 'the agent'\\nextra = 1\")\nagent.run('rebind data')")
    printed = run(kernel, "r = agent.undo()\n"
                          "print(json.dumps([r.names, data is original, 'extra' in globals()]))")
    assert last_json(printed) == [["data", "extra"], True, False]  # the very same object, the added name gone
    printed = run(kernel, "r = agent.redo()\nprint(json.dumps([r.names, data, extra]))")
    assert last_json(printed) == [["data", "extra"], "the agent", 1]
    run(kernel, "agent.close()")


def test_a_name_the_user_rebound_since_is_not_overwritten_without_asking(kernel):
    run(kernel, "mine = 'before'")
    run(kernel, "agent = make_agent(\"mine = 'agent'\")\nagent.run('change mine')")
    run(kernel, "mine = 'typed by the user'")  # the user's own later cell
    printed = run(kernel, "from nbagent.checkpoints.kernel_ledger import KernelConflict\n"
                          "try:\n    agent.undo()\nexcept KernelConflict as exc:\n    print(json.dumps([str(exc), mine]))")
    message, value = last_json(printed)
    assert value == "typed by the user"  # nothing restored
    assert "you changed these kernel variables since: mine" in message and "with force" in message
    printed = run(kernel, "agent.undo(force=True)\nprint(json.dumps(mine))")  # the user said yes
    assert last_json(printed) == "before"
    run(kernel, "agent.close()")


def test_the_memory_cap_releases_old_values_and_says_so(kernel):
    run(kernel, "big = np.zeros(100_000)")  # 800 KB, over the 100 KB cap
    printed = run(kernel, "agent = make_agent('big = None', kernel_undo_max_bytes=100_000)\n"
                          "result = agent.run('drop big')\n"
                          "r = agent.undo()\n"
                          "print(json.dumps([changes(result)[0]['dropped'], r.not_restored, big is None, len(r.replay)]))")
    dropped, not_restored, still_none, replay_cells = last_json(printed)
    assert dropped == ["big (turn 1)"]
    assert not_restored == ["big (its old value was released by the memory cap)"]
    assert still_none  # not restored, and said so
    assert replay_cells > 0  # restart and replay is offered: the cells that built the kernel, for the user to confirm
    run(kernel, "agent.close()")
