"""Attached-context figures: the absorb step a turn pays before it starts, with 20 attached sources.

Two cases on a real workspace database (a session of 400 stored messages): nothing changed since the
last turn (one query, no note), and all 20 sources changed (20 notes appended and saved, what was seen
committed). Medians of many runs, side by side with the goal the issue names: under 5 ms unchanged.

Run: .venv/bin/python bench/context.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from nbagent.attached.absorber import absorb  # noqa: E402
from nbagent.attached.records import parse_output  # noqa: E402
from nbagent.attached.store import ContextStore  # noqa: E402
from nbagent.store.sessions import SessionStore  # noqa: E402

SOURCES = 20
RUNS = 200
GOAL_MS = 5.0


def setup(root: Path):
    sessions = SessionStore(root)
    session = sessions.open("new", root)
    for i in range(200):
        session.begin_turn(f"prompt {i}")
        session.append([{"role": "user", "content": f"prompt {i} " * 20},
                        {"role": "assistant", "content": f"answer {i} " * 60}])
    store = ContextStore(sessions.db)
    for i in range(SOURCES):
        store.push(f"source-{i:02d}", parse_output(f"first text of source {i}\n" * 30), session_id=session.id)
    absorb(store, session, lambda event: None)
    return sessions, store, session


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sessions, store, session = setup(Path(tmp))
        unchanged, changed = [], []
        for run in range(RUNS):
            start = time.perf_counter()
            notes = absorb(store, session, lambda event: None)
            unchanged.append(time.perf_counter() - start)
            assert notes == []
            if run % 4 == 0:  # the all-changed case appends 20 notes: fewer runs keep the history realistic
                for i in range(SOURCES):
                    store.push(f"source-{i:02d}", parse_output(f"text {run} of source {i}\n" * 30),
                               session_id=session.id)
                start = time.perf_counter()
                notes = absorb(store, session, lambda event: None)
                changed.append(time.perf_counter() - start)
                assert len(notes) == SOURCES
        sessions.close()
    print(f"absorb before a turn, {SOURCES} attached sources, session of 400+ messages "
          f"(medians; {len(unchanged)} and {len(changed)} runs)")
    print(f"{'case':<16}{'median ms':>12}{'goal ms':>10}")
    print(f"{'unchanged':<16}{median_ms(unchanged):>12.3f}{GOAL_MS:>10.1f}")
    print(f"{'all changed':<16}{median_ms(changed):>12.3f}{'-':>10}")


if __name__ == "__main__":
    main()
