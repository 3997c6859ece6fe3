"""A turn that edits files, run as a child process for the kill test (killed at a random moment).

    python kill_child.py WORKSPACE STEPS

Prints "ready SESSION" when the turn starts and "result N" after each tool call's result.
"""

from __future__ import annotations

import sys

from nbagent import Agent
from nbagent import events as ev
from nbagent.testing.replies import Call, Reply
from nbagent.testing.scripted import ScriptedModel


def replies(steps: int) -> list:
    out = []
    for i in range(steps):
        calls = [Call("write_file", {"path": f"out/f{i}.txt", "content": f"file {i}\n" * 50})]
        if i % 3 == 0:
            calls.append(Call("write_file", {"path": "notes.txt", "content": f"notes after step {i}\n"}))
        out.append(Reply(tool_calls=calls))
    return [*out, "All written."]


def main(workspace: str, steps: int) -> None:
    agent = Agent(model=ScriptedModel(replies(steps), chunk_size=64), workspace=workspace, approval="auto")
    results = 0

    def show(event: ev.Event) -> None:
        nonlocal results
        if isinstance(event, ev.TurnStart):
            print(f"ready {agent.session_id}", flush=True)
        elif isinstance(event, ev.ToolResult):
            results += 1
            print(f"result {results}", flush=True)

    agent.subscribe(show)
    agent.run("write the files")
    print("finished", flush=True)
    agent.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
