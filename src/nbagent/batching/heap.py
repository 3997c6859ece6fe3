"""Keep the cycle collector off the objects that existed before a batch while its tasks run.

Every task's agent leaves a few hundred objects in reference cycles (the openai client's resources
point back at their client; asyncio transports hold their own callbacks), so the collector's full
pass runs about every seventy tasks. A full pass walks every tracked object of the process: in the
interpreter of bench/batch.py 164,000 of them, 105-120 ms of CPU with the interpreter lock held, during
which all of the batch's agents stand still; a kernel holding a user's data has many more. With the
objects from before the batch frozen (``gc.freeze``), the pass only walks what the batch made: 15-27
ms for 64 tasks' garbage. The freeze ends with the last batch running in the process, and the
collector then sees everything again; unless the process had frozen its heap before the batch, which
then stays frozen. A Dask worker's interpreter is frozen the same way for as long
as a batch runs on its cluster (``freeze`` and ``thaw`` through ``client.run``).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

_LOCK = threading.Lock()
_running = 0
_frozen_before = False  # the process had frozen its heap itself (nbagent's Jupyter server does at start-up)


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Freeze the objects that exist now for as long as the block runs (nested and threaded uses
    share one freeze, which ends with the last of them).

    Garbage among the frozen objects waits for the end of the block; objects made inside it are
    collected as usual.
    """
    freeze()
    try:
        yield
    finally:
        thaw()


def freeze() -> None:
    """Start a frozen stretch (or join the one running); each call needs its ``thaw``."""
    global _running, _frozen_before
    with _LOCK:
        if _running == 0:
            _frozen_before = gc.get_freeze_count() > 0
            gc.freeze()
        _running += 1


def thaw() -> None:
    """End this caller's part of the frozen stretch; the last one to end it thaws the heap."""
    global _running
    with _LOCK:
        if _running == 0:  # a worker that joined the cluster after the batch froze the others
            return
        _running -= 1
        if _running == 0:
            gc.unfreeze()
            if _frozen_before:
                # A heap the process froze before the batch stays frozen after it: the freeze cannot
                # be taken back in part, so what is alive now is frozen again, the garbage collected first.
                gc.collect()
                gc.freeze()
