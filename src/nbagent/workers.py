"""One pool of worker threads for the blocking work of every agent in a process.

Each agent runs its turns on an event loop of its own, and an event loop makes its own default
executor: its first ``to_thread`` (a tool call, the SDK's first request) started a new thread, and
the loop's close ended it. A batch runs hundreds of short-lived agents in one process, and those
thread starts were about a twentieth of the CPU each task cost (sampled with py-spy). The agents'
loops share this pool instead: its threads are made as calls need them and reused while idle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from typing import Any, Callable, Coroutine

MAX_WORKERS = 256
"""Threads the pool may grow to. A blocking call can take long (a shell command, an approval that
waits for a person), so the bound is high; threads are only made when none is idle."""


class _SharedPool(concurrent.futures.ThreadPoolExecutor):
    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Ignored: an event loop shuts its default executor down when it closes, and this one
        serves the other agents' loops too. Its threads end with the process, as a pool's do."""


_POOL: _SharedPool | None = None
_POOL_LOCK = threading.Lock()


def shared_pool() -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool (made on first use)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _SharedPool(MAX_WORKERS, thread_name_prefix="nbagent-worker")
        return _POOL


_BACKGROUND: set[asyncio.Task] = set()
"""Tasks started and not waited for, held here: an event loop keeps only weak references to its tasks."""


def in_background(coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
    """Run ``coro`` on the running loop without waiting for it (a release after a session's DELETE)."""
    task = asyncio.ensure_future(coro)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)
    return task


BLOCKED_WAIT = 0.002
"""How long ``run_in_pool`` holds its loop, blocked, before it awaits the call instead (seconds)."""


async def run_in_pool(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``asyncio.to_thread`` for a loop of one agent's own (engine.agent._LoopThread): ``fn`` in the
    shared pool, with the caller's context, and the loop first waits for it blocked, up to BLOCKED_WAIT.

    Why: a quick call (most tool calls) is back before then, and its result then needs no wake-up of
    the loop through its self-pipe and no second pass of it: 0.03-0.08 ms a call instead of 0.13 on a
    2-core VM (medians of 2,000 calls of a function that returns at once). Holding an agent's own loop for
    2 ms delays nothing a person sees; never use it on a loop others share (the Jupyter server's).
    """
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    future = shared_pool().submit(call)
    try:
        return future.result(BLOCKED_WAIT)
    except TimeoutError:
        if future.done():  # fn's own TimeoutError, or it ended just after the wait: its outcome either way
            return future.result()
    return await asyncio.wrap_future(future)
