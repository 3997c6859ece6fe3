"""Where batch tasks run: locally (asyncio, a semaphore, a thread per running task) or on Dask.

No scheduler of our own: locally a semaphore caps how many tasks run at once; with a
``dask.distributed.Client`` Dask places the tasks, reschedules those of a worker that died, and
``as_completed`` streams the rows back as they finish. Either way ``concurrency`` tasks are in
flight at most, and every task ends as a row (a failure included).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from typing import Any

from . import heap
from .progress import Progress
from .task import TaskSpec, empty_row, run_task


def run_local(specs: list[TaskSpec], concurrency: int, report: Progress) -> list[dict[str, Any]]:
    """Run the tasks here, ``concurrency`` at once; returns their rows as they finished."""
    # A fresh thread owns the loop: in a Jupyter kernel the main thread already runs one.
    with heap.frozen_heap(), concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nbagent-batch") as driver:
        return driver.submit(asyncio.run, _run_all(specs, concurrency, report)).result()


async def _run_all(specs: list[TaskSpec], concurrency: int, report: Progress) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(concurrency)
    loop = asyncio.get_running_loop()
    rows: list[dict[str, Any]] = []
    # Each running task blocks a thread (git, the agent's run); the pool is as wide as the gate.
    with concurrent.futures.ThreadPoolExecutor(concurrency, thread_name_prefix="nbagent-task") as pool:

        async def one(spec: TaskSpec) -> None:
            async with gate:
                row = await loop.run_in_executor(pool, run_task, spec)
            rows.append(row)
            report.finished(row)

        await asyncio.gather(*(one(spec) for spec in specs))
    return rows


def run_distributed(client: Any, specs: list[TaskSpec], concurrency: int, report: Progress
                    ) -> list[dict[str, Any]]:
    """Run the tasks on ``client``'s cluster, ``concurrency`` in flight; rows stream back as they end."""
    # Each worker's own heap is frozen while the batch runs (batching.heap); a worker that cannot
    # be reached just goes without, and one that joins later is never frozen.
    client.run(heap.freeze, on_error="ignore")
    try:
        return _stream_distributed(client, specs, concurrency, report)
    finally:
        client.run(heap.thaw, on_error="ignore")


def _stream_distributed(client: Any, specs: list[TaskSpec], concurrency: int, report: Progress
                        ) -> list[dict[str, Any]]:
    from dask.distributed import as_completed

    waiting = iter(specs)
    owners: dict[str, TaskSpec] = {}

    def submit(spec: TaskSpec):
        future = client.submit(run_task, spec, key=f"nbagent-{spec.batch_id}-{spec.index}", pure=False,
                               retries=1)
        owners[future.key] = spec
        return future

    first = [submit(spec) for spec in itertools.islice(waiting, concurrency)]
    finished = as_completed(first, with_results=True, raise_errors=False)
    rows: list[dict[str, Any]] = []
    for future, result in finished:
        spec = owners[future.key]
        row = result if isinstance(result, dict) else _lost(spec, result)
        future.release()
        rows.append(row)
        report.finished(row)
        nxt = next(waiting, None)
        if nxt is not None:
            finished.add(submit(nxt))
    return rows


def _lost(spec: TaskSpec, failure: Any) -> dict[str, Any]:
    """The row of a task Dask gave up on (its workers kept dying, or it could not be run at all)."""
    row = empty_row(spec)
    row["host"] = None
    row["pid"] = None
    row["error"] = f"{type(failure).__name__}: {failure}"
    return row
