"""Stream 20,000 scripted text deltas at full speed through the live view of a real Agent.

Prints, as medians of a few runs measured in this one run:
- frontend messages sent per second of stream (goal: at most 30), counted by a recording comm;
- kernel CPU time per 1,000 deltas (this process: the agent's thread, the flusher and the widgets);
side by side with two references: the agent with no view at all, and a naive view that updates
the answer widget on every delta (what the coalescing saves).

    .venv/bin/python bench/stream.py [--deltas 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import comm
from comm.base_comm import BaseComm

from nbagent import Agent
from nbagent.ids import short_id
from nbagent.testing.replies import Reply
from nbagent.testing.scripted import ScriptedModel

SENT: list[str] = []


class RecordingComm(BaseComm):
    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        SENT.append(msg_type)


comm.create_comm = lambda *a, **k: RecordingComm(*a, **k)


def one_run(kind: str, deltas: int) -> dict[str, float]:
    from nbagent.jupyter.widgets.view_registry import hub_for
    from nbagent.jupyter.widgets.answer import Answer

    text = "".join(f"w{i % 10} " if i % 40 else "\n\n" for i in range(deltas))  # one delta per 3 chars
    model = ScriptedModel([Reply(text=text)], chunk_size=3)
    with tempfile.TemporaryDirectory() as ws, Agent(workspace=ws, model=model, persist=False, memory=False) as agent:
        turn_id = short_id("turn_")
        view = None
        if kind == "live view":
            view = hub_for(agent).turn_view("bench", turn_id)
        elif kind == "naive view":
            answer = Answer()
            agent.subscribe(lambda e: setattr(answer, "markdown", answer.markdown + e.text) if e.type == "text_delta" else None)
        SENT.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        result = agent.submit("bench", turn_id=turn_id).result()
        if view is not None:
            view.wait(30)
            view.flush()
            assert view.answer.markdown.strip() == text.strip(), "the view lost text"
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert result.text == text.strip()
        updates = sum(1 for m in SENT if m == "comm_msg")
    return {"seconds": wall, "msgs_per_s": updates / wall, "cpu_ms_per_1k": cpu * 1000 / (deltas / 1000),
            "messages": updates}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--naive-runs", type=int, default=1,
                        help="runs of the naive reference (it re-renders the whole answer per delta: minutes)")
    args = parser.parse_args()
    kinds = ("no view", "live view", "naive view")
    one_run("live view", 500)  # warm up imports
    runs = {"no view": args.runs, "live view": args.runs, "naive view": args.naive_runs}
    results = {k: [one_run(k, args.deltas) for _ in range(runs[k])] for k in kinds}
    med = {k: {m: statistics.median(r[m] for r in runs) for m in runs[0]} for k, runs in results.items()}
    print(f"{args.deltas} text deltas, median of {args.runs} runs ({args.naive_runs} of the naive view)\n")
    print(f"{'':12}{'stream s':>10}{'messages':>10}{'msgs/s':>10}{'CPU ms/1k deltas':>18}")
    for kind in kinds:
        m = med[kind]
        print(f"{kind:12}{m['seconds']:>10.2f}{m['messages']:>10.0f}{m['msgs_per_s']:>10.1f}{m['cpu_ms_per_1k']:>18.1f}")
    live, naive, bare = med["live view"], med["naive view"], med["no view"]
    worst = max(r["msgs_per_s"] for r in results["live view"])
    print(f"\nlive view: {live['msgs_per_s']:.1f} frontend messages/s, worst of {args.runs} runs {worst:.1f} "
          f"(goal <= 30 in every run); "
          f"{naive['messages'] / max(live['messages'], 1):.0f}x fewer messages than the naive view")
    print(f"CPU per 1k deltas: live/no-view {live['cpu_ms_per_1k'] / bare['cpu_ms_per_1k']:.2f}x, "
          f"naive/no-view {naive['cpu_ms_per_1k'] / bare['cpu_ms_per_1k']:.2f}x")


if __name__ == "__main__":
    main()
