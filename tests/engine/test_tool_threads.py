"""nbagent.workers.run_in_pool: how a sync tool's call leaves and rejoins the agent's own loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from nbagent.workers import BLOCKED_WAIT, run_in_pool

WHO = contextvars.ContextVar("WHO", default="nobody")


def test_the_call_runs_in_a_pool_thread_with_the_callers_context():
    async def main():
        WHO.set("the turn")
        return await run_in_pool(lambda x, y=0: (threading.current_thread().name, WHO.get(), x + y), 1, y=2)

    name, who, total = asyncio.run(main())
    assert name.startswith("nbagent-worker") and who == "the turn" and total == 3


def test_an_error_of_the_call_is_raised_as_it_is_even_its_own_timeout():
    def fails(kind):
        raise kind("from the tool")

    for kind in (ValueError, TimeoutError):
        with pytest.raises(kind, match="from the tool"):
            asyncio.run(run_in_pool(fails, kind))


def test_a_slow_call_is_awaited_so_the_loop_goes_on_meanwhile():
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.ensure_future(ticker())
        result = await run_in_pool(lambda: time.sleep(0.3) or "slept")
        task.cancel()
        return result, ticks

    result, ticks = asyncio.run(main())
    assert result == "slept"
    assert ticks >= 10, f"the loop ticked {ticks} times in 0.3 s: it was held, not just for {BLOCKED_WAIT} s"


def test_a_quick_call_comes_back_without_waking_the_loop_through_its_self_pipe():
    """The reason run_in_pool exists: asyncio.to_thread wakes the loop from the worker thread for every
    call. A worker thread may start late on a loaded machine, so one quick call of twenty suffices."""
    async def main():
        loop = asyncio.get_running_loop()
        wakes = 0
        real = loop.call_soon_threadsafe

        def counted(*args, **kwargs):
            nonlocal wakes
            wakes += 1
            return real(*args, **kwargs)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        quick = 0
        for _ in range(20):
            before = wakes
            assert await run_in_pool(str, 7) == "7"
            quick += wakes == before
        await asyncio.to_thread(str, 7)
        return quick, wakes

    quick, wakes = asyncio.run(main())
    assert quick >= 1
    assert wakes >= 1, "asyncio.to_thread's wake must have been counted: the count works"
