"""A scripted session writer run as a child process by the kill and concurrency tests.

    python writer.py kill WORKSPACE            # continue one session forever, printing "ack N" per step
    python writer.py burst WORKSPACE NAME N    # wait for WORKSPACE/go, then write N steps to a new session

Message i of a session is a pure function of i (``message_at``), so the parent
can check every acknowledged message, not just count them.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from nbagent.memory.entries import ProjectMemory
from nbagent.store.sessions import SessionStore


def message_at(i: int, size: int = 0) -> dict:
    """Even: an assistant message calling a tool (with a reasoning item); odd: the tool's result."""
    call_id = f"call_{i - i % 2}"
    if i % 2 == 0:
        return {
            "role": "assistant", "content": f"step {i // 2}: reading",
            "reasoning_items": [{"id": f"rs_{i}", "summary": [], "encrypted_content": "gAAA" + "x" * 40}],
            "tool_calls": [{"id": call_id, "name": "read_file", "arguments": f'{{"path": "f{i}.py"}}',
                            "reasoning_id": f"rs_{i}"}],
        }
    body = f"result of {call_id}\n" + ("y" * size)
    return {"role": "tool", "tool_call_id": call_id, "name": "read_file", "content": body, "is_error": False}


def step(session, rng: random.Random) -> None:
    """One completed step: maybe a new turn, the model's message and the tool result, bookkeeping."""
    i = len(session.messages)
    if i % 8 == 0:
        session.begin_turn(f"prompt {i}")
    session.append([message_at(i), message_at(i + 1, size=rng.choice((100, 2_000, 20_000)))])
    session.add_tool_call({"call_id": f"call_{i}", "name": "read_file", "arguments": "{}", "status": "done",
                           "duration_ms": 1.5})
    session.add_usage(100, 20, None)


def kill_mode(workspace: str) -> None:
    rng = random.Random()
    store = SessionStore(workspace)
    session = store.open("continue", origin="kill.ipynb", provider="scripted", model="scripted")
    print(f"ready {session.id} {len(session.messages)}", flush=True)
    while True:
        step(session, rng)
        if rng.random() < 0.1:
            session.set_todos([{"content": f"todo {len(session.messages)}", "status": "in_progress"}])
        print(f"ack {len(session.messages)}", flush=True)


def burst_mode(workspace: str, name: str, count: int) -> None:
    rng = random.Random(name)
    store = SessionStore(workspace)
    memory = ProjectMemory(store.db)
    session = store.create(origin=f"{name}.ipynb", provider="scripted", model="scripted")
    print("ready", flush=True)
    go = Path(workspace) / "go"
    while not go.exists():  # start together, so the writers really overlap
        time.sleep(0.005)
    for n in range(count):
        step(session, rng)
        if n % 20 == 0:
            memory.remember("fact", f"{name} wrote step {n}")
        time.sleep(0.001)  # spread the writes out, so that even a loaded machine interleaves the writers
    print(f"done {session.id} {len(session.messages)}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "kill":
        kill_mode(sys.argv[2])
    else:
        burst_mode(sys.argv[2], sys.argv[3], int(sys.argv[4]))
