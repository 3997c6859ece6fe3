"""A step of the loop does the same work on a long history as on a short one (issue 41).

No timing: every call of an nbagent function on any thread is counted while a turn runs (a profile
hook, the way cProfile counts), and the calls one more step adds are compared between a 10- and a
400-message history. A per-step pass over the history (adding up its sizes, converting or copying
each message in Python) shows as a count that grows with it. The scripted model stands for the model
and is not counted (nbagent.testing); neither is the one-time sizing of a history the loop has not
seen yet, which the difference of two runs of different lengths takes out.
"""

from __future__ import annotations

import dis
import functools
import inspect
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

import nbagent
from nbagent import function_tool
from nbagent.testing.replies import Call, Reply

pytestmark = pytest.mark.process  # the agent's checkpoints start git

PACKAGE = str(Path(nbagent.__file__).parent)
TESTING = str(Path(nbagent.__file__).parent / "testing")


def lookup(key: str) -> str:
    """Return a short answer at once.

    Args:
        key: anything
    """
    return f"ok {key}"


def talk(n: int) -> list[dict]:
    out = []
    for i in range(n // 2):
        out += [{"role": "user", "content": f"question {i} " + "x" * 200},
                {"role": "assistant", "content": f"answer {i} " + "y" * 200}]
    return out


def tool_traffic(n: int) -> list[dict]:
    """Old tool calls with long results: what pruning strips, so that a cut holds for many steps."""
    out = [{"role": "user", "content": "start"}]
    for i in range((n - 1) // 2):
        out += [{"role": "assistant", "content": "", "tool_calls": [
                    {"id": f"old_{i}", "name": "lookup", "arguments": f'{{"key": "{i}"}}'}]},
                {"role": "tool", "tool_call_id": f"old_{i}", "name": "lookup", "content": "r" * 2000}]
    return out


class CallCounter:
    """Counts calls of nbagent's own functions (not nbagent.testing's) on this thread and on the threads
    started while it counts (the agent's loop). The shared pool's threads are left out: they run the
    tools, whose work does not depend on the history, and some were started before."""

    def __init__(self):
        self.calls: Counter[tuple[str, str]] = Counter()
        self.counting = False

    def _hook(self, frame, event, arg):
        if not self.counting or threading.current_thread().name.startswith("nbagent-worker"):
            sys.setprofile(None)  # this thread is done with (or not for) counting
        elif event == "call" and not _resumed_coroutine(frame):
            path = frame.f_code.co_filename
            if path.startswith(PACKAGE) and not path.startswith(TESTING):
                self.calls[(path[len(PACKAGE) + 1:], frame.f_code.co_name)] += 1

    def __enter__(self):
        self.counting = True
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        self.counting = False
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def _resumed_coroutine(frame) -> bool:
    """A coroutine or an async generator taken up again after an await: how often it waits depends on how
    the bytes of a request come and go (a longer request is read in more pieces, a loaded machine splits
    them otherwise), not on work done in Python. A generator's resumptions are counted: a generator
    expression over the history is work per message."""
    code = frame.f_code
    waits = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
    return bool(code.co_flags & waits) and frame.f_lasti > _first_resume(code)


@functools.lru_cache(maxsize=None)
def _first_resume(code) -> int:
    return next(i.offset for i in dis.get_instructions(code) if i.opname == "RESUME")


def counted_run(make_agent, prior: list[dict], steps: int, **options) -> Counter:
    replies = [Reply(tool_calls=[Call("lookup", {"key": str(i)})]) for i in range(steps)] + [Reply(text="done")]
    with CallCounter() as counter:  # before the agent: its threads start with the hook set
        agent = make_agent(*replies, tools=[function_tool(lookup, read_only=True)], max_steps=steps + 1, memory=False, **options)
        agent.session.append(prior)
        result = agent.run("go")
    assert result.reason == "done" and len(result.tool_calls) == steps
    return counter.calls


def per_step(make_agent, prior: list[dict], **options) -> Counter:
    """The calls ten more steps add, per function (after a first run: what a process does once is out)."""
    _, short, long = [counted_run(make_agent, prior, steps, **options) for steps in (2, 2, 12)]
    long.subtract(short)
    return long


def grown(small: Counter, large: Counter) -> dict:
    """Functions called more often per step on the long history (beyond a count or two of jitter)."""
    return {name: (small[name], count) for name, count in large.items() if count > small[name] + 2}


@pytest.mark.parametrize("persist", [False, True], ids=["in memory", "sqlite"])
def test_a_step_calls_the_same_functions_as_often_on_a_long_history(make_agent, persist):
    small = per_step(make_agent, talk(10), persist=persist)
    large = per_step(make_agent, talk(400), persist=persist)
    assert large[("session/message_log.py", "message_chars")] == small[("session/message_log.py", "message_chars")]
    assert grown(small, large) == {}


def test_a_step_after_a_kept_pruning_cut_does_not_prune_the_history_again(make_agent):
    # 10 (resp. 400) old tool results of 2,000 characters, a 2,000-token budget: the first request
    # prunes, and the steps after it reuse the cut (the pruned older part is made once).
    small = per_step(make_agent, tool_traffic(10), compact_threshold=2_000)
    large = per_step(make_agent, tool_traffic(400), compact_threshold=2_000)
    assert large[("engine/compaction.py", "_strip")] == small[("engine/compaction.py", "_strip")]
    assert grown(small, large) == {}


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_step_through_the_openai_adapters_does_not_convert_the_whole_history_again(make_agent, api):
    """The adapters' wire form of the history (nbagent.model.wire_prefix): the real ``openai`` client against
    the scripted HTTP server; only the new messages of a step are converted (every message was, at every
    step, through Chat Completions' image check and the Responses adapter's conversion)."""
    from nbagent.testing.server import ScriptedServer

    with ScriptedServer() as server:
        def make(*replies, **options):
            server.enqueue(*replies)
            return make_agent(model="scripted-model", base_url=server.url, api_key="sk-test", api=api, **options)

        small = per_step(make, talk(10))
        large = per_step(make, talk(400))
    assert grown(small, large) == {}
