"""Record the event sequences that the Python and TypeScript reducers are both tested on.

Each scenario runs a real Agent on a ScriptedModel in a scratch workspace and writes
tests/fixtures/event_sequences/<name>.json: {"description", "events": [...], "expected": AgentState}.
The expected state is the Python reducer's; rerun this script when a reduce rule changes on purpose,
and review the diff: it is the contract the panel follows.

    .venv/bin/python scripts/record_sequences.py             # run the scenarios again (new ids)
    .venv/bin/python scripts/record_sequences.py --expected  # only recompute the expected states
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from pathlib import Path

from nbagent import Agent
from nbagent import events as ev
from nbagent.render.agent_state import AgentState, reduce
from nbagent.testing import Call, Reply, ScriptedModel, Stall

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "event_sequences"


def record(name: str, description: str, scenario) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "notes.txt").write_text("alpha\nbeta\n")
        events: list[ev.Event] = []
        agent = scenario(Path(tmp), events)
        agent.close()
    write_events(name, description, events)


def _stable(data):
    """Durations and temporary paths differ from run to run: fix them so a re-recording diffs cleanly."""
    if isinstance(data, dict):
        return {k: (12.5 if k == "duration_ms" and v else _stable(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [_stable(v) for v in data]
    return data


def _agent(root: Path, events: list, replies, **options) -> Agent:
    agent = Agent(workspace=root, model=ScriptedModel(replies, chunk_size=6), persist=False, memory=False,
                  **options)
    agent.subscribe(events.append)
    return agent


def text_and_tools(root, events):
    agent = _agent(root, events, [
        Reply(text="Let me look.", reasoning="The user wants the notes.",
              tool_calls=[Call("read_file", {"path": "notes.txt"}, id="call_read")]),
        Reply(text="The notes say alpha and beta."),
    ], approval="auto")
    agent.run("What do the notes say?")
    return agent


def approval_denied_then_done(root, events):
    agent = _agent(root, events, [
        Reply(text="I will write it.", tool_calls=[Call("write_file", {"path": "new.txt", "content": "x\n"},
                                                        id="call_write")]),
        Reply(text="You declined; nothing was written."),
    ], approval="ask")

    def answer(event):
        if isinstance(event, ev.ApprovalRequest):
            agent.decide(event.call_id, "deny")

    agent.subscribe(answer)
    agent.run("Write new.txt")
    return agent


def abort_with_queue(root, events):
    started = threading.Event()
    agent = _agent(root, events, [
        Reply(text="Running it.", tool_calls=[Call("bash", {"command": "sleep 30"}, id="call_sleep")]),
    ], approval="auto")
    agent.subscribe(lambda e: started.set() if isinstance(e, ev.ToolCall) else None)
    first = agent.submit("Sleep a while")
    agent.submit("Then say hi")
    agent.submit("And bye")
    started.wait(10)
    agent.abort()
    first.result(10)
    agent.wait(10)
    return agent


def aborted_mid_stream(root, events):
    streaming = threading.Event()
    agent = _agent(root, events, [Reply(text="Part of an answer", tool_calls=[
        Call("read_file", {"path": "notes.txt"}, id="call_cut")]), Stall(30)], approval="auto")
    agent.subscribe(lambda e: streaming.set() if isinstance(e, ev.ToolResult) else None)
    future = agent.submit("Read the notes, then think")
    streaming.wait(10)
    agent.abort()
    future.result(10)
    return agent


def todos_and_settings(root, events):
    agent = _agent(root, events, [
        Reply(tool_calls=[Call("todo_write", {"todos": [{"content": "Read notes", "status": "in_progress"},
                                                        {"content": "Answer", "status": "pending"}]},
                               id="call_todo")]),
        Reply(text="Planned."),
    ], approval="ask")
    agent.run("Plan the work")
    agent.reconfigure(approval="read-only")
    return agent


def context_notes(root, events):
    agent = _agent(root, events, [Reply(text="The build fails."), Reply(text="Now it passes.")],
                   approval="auto", context_poll=False)
    agent.context.push("build", "41 passed, 1 failed", why="the CI result")
    agent.run("How is the build?")
    agent.context.push("build", "42 passed")
    agent.context.push("build", "42 passed, 0 failed")
    agent.run("And now?")
    return agent


def checkpoint_undo_redo(root, events):
    agent = _agent(root, events, [
        Reply(tool_calls=[Call("write_file", {"path": "notes.txt", "content": "gamma\n"}, id="call_write")]),
        Reply(text="Rewritten."),
    ], approval="auto")
    agent.run("Rewrite the notes")
    agent.undo()
    agent.redo()
    return agent


def kernel_changed_undo(root, events):
    from nbagent.tools.kernel import KernelBridge

    namespace = {"df": [1, 2, 3], "tmp": "scratch", "x": 1}

    def run(code):
        exec(compile(code, "<agent>", "exec"), namespace)
        return {"stdout": "", "stderr": "", "result": None, "error": None}

    kernel = KernelBridge(namespace, run, hidden=["__builtins__"])
    agent = _agent(root, events, [
        Reply(tool_calls=[Call("kernel_run", {"code": "df.append(4)\nx = 2\ndel tmp\ny = 3"}, id="call_kernel")]),
        Reply(text="Changed the kernel."),
    ], approval="auto", kernel=kernel, kernel_run_auto=True)
    agent.run("Change the kernel")
    agent.undo()
    return agent


SCENARIOS = {
    "kernel_changed_undo": ("kernel_run adds, rebinds, deletes and mutates names: kernel_changed marks its tool row; "
                            "the turn has a checkpoint with no files, which undo marks undone", kernel_changed_undo),
    "checkpoint_undo_redo": ("a turn that rewrites a file takes a checkpoint; undo then redo mark that finished turn "
                             "and move the undo/redo targets", checkpoint_undo_redo),
    "text_and_tools": ("reasoning, a paragraph, a tool call and its result, a second paragraph: items in order",
                       text_and_tools),
    "approval_denied": ("an approval request answered deny: the pending approval goes, the call is denied",
                        approval_denied_then_done),
    "abort_with_queue": ("Abort during a tool call with two prompts queued: the call is interrupted, the queued "
                         "prompts end with turn_end(aborted) and leave the queue", abort_with_queue),
    "aborted_mid_stream": ("Abort while the model stalls after a tool call: the turn ends aborted",
                           aborted_mid_stream),
    "todos_and_settings": ("todos set by a tool, then the approval mode changed live", todos_and_settings),
    "context_notes": ("an attached source's notes before two turns (attached, then changed 2x): one context "
                      "notice in each turn, after its turn_start", context_notes),
}


def memory_told_twice() -> list[ev.Event]:
    """Written by hand (a real run would need a global memory store): a turn told its top entries at the
    start, then a search's hits, one the same workspace entry (now with its score), one from the global
    memory that happens to share its number."""
    turn = "turn_memory"
    top = [{"id": 1, "kind": "fact", "text": "uses uv"}, {"id": 2, "kind": "fact", "text": "tests in tests/"}]
    hits = [{"id": 1, "source": "workspace", "text": "uses uv", "score": 0.8, "why": "keyword"},
            {"id": 1, "source": "global", "text": "prefers short answers", "score": 0.5, "why": "cosine"}]
    return [ev.TurnStart(prompt="How do I run the tests?", session_id="s_memory", turn_id=turn),
            ev.MemoryInjected(entries=top, turn_id=turn), ev.TextDelta(text="With uv.", turn_id=turn),
            ev.MemoryInjected(entries=hits, turn_id=turn), ev.TurnEnd(reason="done", text="With uv.", turn_id=turn)]


WRITTEN = {
    "memory_told_twice": ("memory injected twice into one turn: each entry once, by source and id; a workspace "
                          "entry told again gains the score", memory_told_twice),
}


def write_events(name: str, description: str, events: list[ev.Event]) -> None:
    """The sequence file: the events and the state the Python reducer makes of them."""
    state = AgentState()
    for event in events:
        state = reduce(state, event)
    data = {"description": description, "events": [_stable(e.to_dict()) for e in events],
            "expected": _stable(state.to_dict())}
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{name}: {len(events)} events")


def recompute_expected() -> None:
    """The stored events reduced again: for a reduce rule that adds to the state, or a new event field
    with a default (the stored events gain it), without recording them anew (the recorded ids stay, so the
    diff shows only the rule's or the field's effect)."""
    for path in sorted(OUT.glob("*.json")):
        data = json.loads(path.read_text())
        events = [ev.event_from_dict(event) for event in data["events"]]
        data["events"] = [_stable(e.to_dict()) for e in events]
        state = AgentState()
        for event in events:
            state = reduce(state, event)
        data["expected"] = _stable(state.to_dict())
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"{path.stem}: expected state recomputed")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    if sys.argv[1:] == ["--expected"]:
        recompute_expected()
        sys.exit(0)
    wanted = sys.argv[1:] or [*SCENARIOS, *WRITTEN]
    for name in wanted:
        if name in WRITTEN:
            description, make = WRITTEN[name]
            write_events(name, description, make())
            continue
        description, scenario = SCENARIOS[name]
        record(name, description, scenario)
