"""Session storage: a durable SQLite append and a resume, against rewriting one JSON file per step.

    .venv/bin/python bench/sessions.py [--messages 5000] [--repeat 200]

The JSON way is the reference design's: the whole session in one file, rewritten
(to a temporary file, then renamed) after every step and read whole on resume.
Both sides use the same JSON codec (nbagent.store.codec) and skip fsync (SQLite
runs synchronous=NORMAL under WAL; nbagent/store/db.py says why that survives a
killed process). Goal: append <= 0.5 ms whatever the session's length; resume of
5,000 messages <= 15 ms.

Two mixes of messages: "short" items like the reference measurement's (a few
dozen bytes of text each), and "coding" steps (a tool call with a reasoning item
and a 3-60 line tool result), where parsing the JSON is most of a resume.
Wall-clock medians on a shared machine move with its load; CPU time (the
process's own) is printed beside them for that reason.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from nbagent.store import codec
from nbagent.store.sessions import SessionStore


def short_step(i: int, rng: random.Random) -> list[dict]:
    return [{"role": "user", "content": f"message {i}"}, {"role": "assistant", "content": f"reply {i}"}]


def coding_step(i: int, rng: random.Random) -> list[dict]:
    """An assistant message calling a tool (with a reasoning item) and the tool's result."""
    call_id = f"call_{i:06d}"
    return [
        {"role": "assistant", "content": f"Let me look at part {i} of the module.",
         "reasoning_items": [{"id": f"rs_{i}", "summary": [], "encrypted_content": "gAAAA" + "q" * 120}],
         "tool_calls": [{"id": call_id, "name": "read_file", "arguments": f'{{"path": "src/m{i}.py"}}',
                         "reasoning_id": f"rs_{i}"}]},
        {"role": "tool", "tool_call_id": call_id, "name": "read_file", "is_error": False,
         "content": "\n".join(f"{n:4d}  line of code number {n}" for n in range(rng.randint(3, 60)))},
    ]


MIXES = {"short": short_step, "coding": coding_step}


def build_session(store: SessionStore, count: int, make_step, rng: random.Random):
    session = store.create(provider="openai", model="gpt-4o")
    step = 0
    while len(session.messages) < count:
        if step % 10 == 0:
            session.begin_turn(f"prompt {step}")
        session.append(make_step(step, rng)[: count - len(session.messages)])
        step += 1
    return session


def rewrite_json(path: Path, session) -> None:
    record = {"id": session.id, "title": session.title, "model": session.model, "todos": session.todos,
              "inputTokens": session.input_tokens, "outputTokens": session.output_tokens,
              "messages": session.messages}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(codec.dumps(record))
    os.replace(tmp, path)


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``fn``."""
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def measure(root: Path, count: int, make_step, repeat: int) -> dict:
    rng = random.Random(7)
    store = SessionStore(root)
    session = build_session(store, count, make_step, rng)
    json_path = root / "session.json"
    rewrite_json(json_path, session)
    numbers = iter(range(10**6, 10**7))
    out = {"mb": json_path.stat().st_size / 1e6, "messages": count}
    # Resume first, at exactly ``count`` messages; the appends below grow the session.
    loads = max(repeat // 10, 5)
    out["resume sqlite"] = timed(lambda: store.load(session.id), loads)
    out["resume json"] = timed(lambda: codec.loads(json_path.read_bytes()), loads)
    assert len(store.load(session.id).messages) == count
    out["append sqlite"] = timed(lambda: session.append(make_step(next(numbers), rng)), repeat)
    out["append json"] = timed(
        lambda: (session.messages.extend(make_step(next(numbers), rng)), rewrite_json(json_path, session)),
        max(repeat // 4, 5))
    store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    sizes = (500, args.messages)
    print(f"JSON codec: {'orjson' if codec.orjson else 'json (standard library)'}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("median ms, wall (cpu); one appended step = 2 messages\n")
    print(f"{'mix':7} {'messages':>8} {'MB':>5} | {'append SQLite':>15} {'append JSON':>15} {'ratio':>6} | "
          f"{'resume SQLite':>15} {'resume JSON':>15}")
    results = {}
    for mix, make_step in MIXES.items():
        for count in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                r = results[mix, count] = measure(Path(tmp), count, make_step, args.repeat)
            cell = lambda key: f"{r[key][0]:7.3f} ({r[key][1]:5.2f})"  # noqa: E731
            print(f"{mix:7} {count:8d} {r['mb']:5.2f} | {cell('append sqlite')} {cell('append json')} "
                  f"{r['append json'][0] / r['append sqlite'][0]:6.0f} | {cell('resume sqlite')} "
                  f"{cell('resume json')}")
    print()
    for mix in MIXES:
        small, big = results[mix, sizes[0]], results[mix, sizes[1]]
        flat = big["append sqlite"][0] / small["append sqlite"][0]
        print(f"{mix}: SQLite append {big['append sqlite'][0]:.3f} ms at {sizes[1]} messages "
              f"({flat:.2f}x its time at {sizes[0]}; goal <= 0.5 ms, flat); resume {big['resume sqlite'][0]:.1f} ms "
              f"(goal <= 15 ms), JSON file {big['resume json'][0]:.1f} ms")


if __name__ == "__main__":
    main()
